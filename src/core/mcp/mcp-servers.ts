import { TurnlineError } from '../../contract/errors.ts'
import type { McpServer } from '../../contract/mcp-config.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import type { McpEndpoint } from '../../ports/mcp-client.ts'
import type { HttpToolPolicy, McpConfig } from '../engine/service-deps.ts'
import { compileToolPattern } from '../permissions/tool-pattern.ts'
import { hostAllowed } from '../tools/http-tool-call.ts'
import { MCP_TOOL_PREFIX } from './mcp-tool-name.ts'

/** One MCP server of a session: where it is and which of its tools the model may see. */
export interface SessionMcpServer {
  name: string
  endpoint: McpEndpoint
  /** Whether a server-side tool name is offered (`allowed_tools`; absent: all). */
  allows(tool: string): boolean
  /**
   * Why it may not be called now: a session's server whose host is no longer in
   * TURNLINE_TOOL_ALLOWED_HOSTS (checked at every connection, as an HTTP tool's at every call).
   */
  refused?: string
}

/** The deployment's servers, then the session's own, in that order. */
export function sessionMcpServers(
  mcp: McpConfig | undefined,
  policy: Pick<HttpToolPolicy, 'timeoutMs' | 'allowedHosts'>,
  config: SessionConfig,
): SessionMcpServer[] {
  if (!mcp) return []
  return [
    ...mcp.servers.map((server) => toSessionServer(server, policy, 'deployment')),
    ...(config.mcp_servers ?? []).map((server) => toSessionServer(server, policy, 'session')),
  ]
}

function toSessionServer(
  server: McpServer,
  policy: Pick<HttpToolPolicy, 'timeoutMs' | 'allowedHosts'>,
  /** Who named it: the deployment's servers are the operator's. */
  from: 'deployment' | 'session',
): SessionMcpServer {
  const patterns = server.allowed_tools?.map(compileToolPattern)
  const url = new URL(server.url)
  const refused =
    from === 'session' && !hostAllowed(policy, url)
      ? `MCP server ${server.name}: host ${url.host} is not allowed (TURNLINE_TOOL_ALLOWED_HOSTS)`
      : undefined
  return {
    ...(refused ? { refused } : {}),
    name: server.name,
    endpoint: {
      name: server.name,
      url: server.url,
      headers: server.headers ?? {},
      timeoutMs: server.timeout_ms ?? policy.timeoutMs,
      ...(from === 'deployment' ? { operator: true } : {}),
    },
    allows: (tool) => !patterns || patterns.some((matches) => matches(tool)),
  }
}

/**
 * Checked when a session is created: MCP needs a deployment that has it; the session's servers
 * are allow-listed like HTTP tools and do not reuse a deployment server's name; HTTP tools do
 * not take the `mcp__` names.
 */
export function assertMcpAllowed(
  mcp: McpConfig | undefined,
  policy: Pick<HttpToolPolicy, 'allowedHosts'>,
  config: SessionConfig,
): void {
  const invalid = (message: string, field: string) =>
    new TurnlineError('invalid_input', message, { details: { field } })
  const own = config.mcp_servers ?? []
  if (own.length > 0 && !mcp) {
    throw invalid(
      'this deployment has no MCP client: mcp_servers cannot be used here',
      'mcp_servers',
    )
  }
  const deployment = new Set(mcp?.servers.map((server) => server.name) ?? [])
  for (const [index, server] of own.entries()) {
    const field = `mcp_servers[${index}]`
    if (deployment.has(server.name)) {
      throw invalid(
        `MCP server ${server.name} is already defined by the deployment`,
        `${field}.name`,
      )
    }
    const url = new URL(server.url)
    if (!hostAllowed(policy, url)) {
      throw invalid(
        `MCP server ${server.name}: host ${url.host} is not allowed (allowed: ${
          policy.allowedHosts.length ? policy.allowedHosts.join(', ') : 'none'
        }; set TURNLINE_TOOL_ALLOWED_HOSTS)`,
        `${field}.url`,
      )
    }
  }
  if (mcp && (own.length > 0 || mcp.servers.length > 0)) {
    const taken = config.tools.find((tool) => tool.name.startsWith(MCP_TOOL_PREFIX))
    if (taken) {
      throw invalid(`tool name ${taken.name}: names starting with mcp__ are MCP tools`, 'tools')
    }
  }
}

/** The config as the API shows it: MCP header values (credentials) are not echoed back. */
export function withoutSecrets(config: SessionConfig): SessionConfig {
  const servers = config.mcp_servers
  if (!servers?.some((server) => server.headers)) return config
  return {
    ...config,
    mcp_servers: servers.map((server) =>
      server.headers
        ? {
            ...server,
            headers: Object.fromEntries(
              Object.keys(server.headers).map((name) => [name, '[redacted]']),
            ),
          }
        : server,
    ),
  }
}
