import { limitAnswerBytes, MCP_PROTOCOL_BYTES } from '../adapters/mcp/mcp-answer-limit.ts'
import { EgressPolicy } from '../adapters/shared/egress-policy.ts'
import { type EgressRules, egressRulesFrom } from '../src/contract/egress-rules.ts'
import { EgressRefused } from '../src/contract/transport-failure.ts'
import { hostNamed } from '../src/shared/host-list.ts'
import { parseIp } from '../src/shared/ip-address.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'

/** What an entry tells createDeps about the fetch of calls a tenant directs. */
export interface TenantFetchOptions {
  /**
   * A fetch that checks every address it connects to against the egress rules (Node, Lambda and
   * Deno: adapters/egress/checked-fetch.ts). Hosts only a wildcard allows go through it.
   */
  checkedFetch?: (rules: EgressRules) => typeof fetch
  /**
   * The platform's fetch reaches the public internet only (a deployed Worker runs on
   * Cloudflare's network: no loopback, no private network of the operator's): a wildcard may
   * use it, with IP literals still checked here.
   */
  publicOnlyFetch?: boolean
}

const urlOf = (input: string | URL | Request) =>
  new URL(input instanceof Request ? input.url : input.toString())

/** The MCP client's fetches (adapters/mcp/sdk-mcp-client.ts SdkMcpClientOptions). */
export interface McpFetches {
  /** A session's own MCP servers: its tenant's choice, as an HTTP tool's URL is. */
  fetch: typeof fetch
  /** The deployment's MCP servers (TURNLINE_MCP_SERVERS): their hosts are named by the operator. */
  operatorFetch: typeof fetch
}

/** The fetches of HTTP tools and hooks, and of MCP servers (docs/tools.md; answers bounded). */
export interface TenantFetches {
  tools: typeof fetch
  mcp: McpFetches
}

/** Both MCP fetches passed through `wrap` (the trace's). */
export function wrapMcpFetches(
  mcp: McpFetches,
  wrap: (fetchImpl: typeof fetch) => typeof fetch,
): McpFetches {
  return { fetch: wrap(mcp.fetch), operatorFetch: wrap(mcp.operatorFetch) }
}

/**
 * Tenant-directed calls (HTTP tools, HTTP hooks, a session's MCP servers): a host the operator
 * names in TURNLINE_TOOL_ALLOWED_HOSTS (or a deployment MCP server's) goes out as named, with
 * `trusted`; any other host — reachable only through `*` — goes through the checked fetch, so a
 * name that resolves to loopback, a private network or cloud metadata is refused when the call
 * connects. An entry with neither a checked fetch nor a public-only platform fetch refuses `*`
 * at start rather than call unchecked.
 */
export function tenantFetches(
  config: EnvConfig,
  allowedHosts: readonly string[],
  options: TenantFetchOptions,
  trusted: typeof fetch,
): TenantFetches {
  const rules = egressRulesFrom(config)
  if (allowedHosts.includes('*') && !options.checkedFetch && !options.publicOnlyFetch) {
    throw new ConfigError([
      'TURNLINE_TOOL_ALLOWED_HOSTS: * lets tenants choose any host, and this runtime cannot check ' +
        'the addresses a call connects to (a name may resolve to loopback, a private network or ' +
        'cloud metadata); list the hosts tools, hooks and MCP servers may use instead',
    ])
  }
  const checked = options.checkedFetch
    ? options.checkedFetch(rules)
    : literalChecked(rules, trusted)
  const routed =
    (named: readonly string[]): typeof fetch =>
    (input, init) =>
      hostNamed(named, urlOf(input)) ? trusted(input, init) : checked(input, init)
  const mcpHosts = (config.TURNLINE_MCP_SERVERS ?? []).map((s) => new URL(s.url).host.toLowerCase())
  // An MCP answer is read whole by the SDK: bounded to a kept output's size and its protocol.
  const mcpBytes =
    Math.max(config.TURNLINE_TOOL_MAX_OUTPUT_BYTES, config.TURNLINE_TOOL_MAX_RESPONSE_BYTES) +
    MCP_PROTOCOL_BYTES
  // A deployment server's host is named for the deployment's calls only: a session's server on
  // that host is its tenant's call, checked as any other (under `*`, its addresses).
  return {
    tools: routed(allowedHosts),
    mcp: {
      fetch: limitAnswerBytes(routed(allowedHosts), mcpBytes),
      operatorFetch: limitAnswerBytes(routed([...allowedHosts, ...mcpHosts]), mcpBytes),
    },
  }
}

/** The platform's fetch, refusing IP literals the egress rules refuse (names: the platform's). */
export function literalChecked(rules: EgressRules, platform: typeof fetch): typeof fetch {
  const policy = new EgressPolicy(rules, {
    resolve: async () => [],
    ownAddresses: () => [],
    now: () => Date.now(),
  })
  return async (input, init) => {
    const url = urlOf(input)
    if (parseIp(url.hostname)) {
      const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80
      const decision = await policy.check(url.hostname, port)
      if (!decision.ok) throw new EgressRefused(`${url.host} refused: ${decision.reason}`)
    }
    return platform(input, init)
  }
}
