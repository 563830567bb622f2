import * as z from 'zod'
import { type IpNetwork, parseIp, parseNetwork } from '../shared/ip-address.ts'
import { envList } from './env-values.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * The operator's egress settings (docs/configuration.md, "Network egress"): hosts and networks a
 * deployment keeps reachable (`TURNLINE_EGRESS_ALLOW`), names and networks it declares internal
 * (`TURNLINE_EGRESS_DENY`), and the resolvers names are looked up with (`TURNLINE_EGRESS_DNS`).
 * Read by the runner (commands' proxy) and the server (HTTP tools, hooks, MCP servers).
 */

/** A host name (`.suffix` matches every name below it) or an address/network; a port narrows. */
export type EgressEntry =
  | { kind: 'name'; name: string; suffix: boolean; port?: number }
  | { kind: 'network'; network: IpNetwork; port?: number }

/**
 * The settings as validated text (entries lowercase), so they travel as JSON (to the runner's
 * child process); the policy reads each entry with `parseEgressEntry` when it is built.
 */
export interface EgressRules {
  allow: readonly string[]
  deny: readonly string[]
  /** Resolver addresses (`ip` or `ip:port`); empty: the system's resolver (with /etc/hosts). */
  dnsServers: readonly string[]
}

export const NO_EGRESS_RULES: EgressRules = { allow: [], deny: [], dnsServers: [] }

const NAME =
  /^(\.)?((?:[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)\.?$/

function port(text: string | undefined): number | undefined | 'bad' {
  if (text === undefined) return undefined
  if (!/^\d{1,5}$/.test(text)) return 'bad'
  const value = Number(text)
  return value >= 1 && value <= 65535 ? value : 'bad'
}

/** One entry of an allow or deny list; a string says what is wrong with it. */
export function parseEgressEntry(raw: string): EgressEntry | string {
  const text = raw.trim().toLowerCase()
  const bad = `${JSON.stringify(raw)} is not a host, host:port, address, [v6]:port or CIDR`
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  if (bracketed) {
    const ip = parseIp(bracketed[1] ?? '')
    const p = port(bracketed[2])
    if (ip?.family !== 6 || p === 'bad') return bad
    const network = parseNetwork(bracketed[1] ?? '')
    return network ? { kind: 'network', network, ...(p ? { port: p } : {}) } : bad
  }
  if (text.includes('/')) {
    const network = parseNetwork(text)
    return network ? { kind: 'network', network } : bad
  }
  if ((text.match(/:/g) ?? []).length >= 2) {
    const network = parseNetwork(text)
    return network ? { kind: 'network', network } : bad
  }
  const [host = '', portText] = text.split(':')
  const p = port(portText)
  if (p === 'bad') return bad
  const network = parseIp(host) ? parseNetwork(host) : undefined
  if (network) return { kind: 'network', network, ...(p ? { port: p } : {}) }
  const name = NAME.exec(host)
  if (!name?.[2]) return bad
  return { kind: 'name', name: name[2], suffix: name[1] === '.', ...(p ? { port: p } : {}) }
}

const entries = envList.pipe(
  z.array(
    z
      .string()
      .transform((item) => item.toLowerCase())
      .superRefine((item, ctx) => {
        const entry = parseEgressEntry(item)
        if (typeof entry === 'string') ctx.addIssue({ code: 'custom', message: entry })
      }),
  ),
)

/** The entries of a validated list (an invalid one is a fault: they were checked when read). */
export function egressEntries(texts: readonly string[]): EgressEntry[] {
  return texts.map((text) => {
    const entry = parseEgressEntry(text)
    if (typeof entry === 'string') throw new Error(entry)
    return entry
  })
}

/** `1.1.1.1`, `1.1.1.1:5353`, `::1`, `[::1]:5353`: what Node's resolver accepts. */
function resolverAddress(text: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  if (bracketed) return parseIp(bracketed[1] ?? '') !== undefined && port(bracketed[2]) !== 'bad'
  if (parseIp(text)?.family === 6) return true
  const [host = '', portText] = text.split(':')
  return parseIp(host)?.family === 4 && port(portText) !== 'bad'
}

const servers = envList.pipe(
  z.array(z.string().refine(resolverAddress, 'must list resolver addresses (ip or ip:port)')),
)

/** The variables, as strings; empty counts as unset (the caller drops empty values). */
export const EgressEnvShape = {
  TURNLINE_EGRESS_ALLOW: entries.optional(),
  TURNLINE_EGRESS_DENY: entries.optional(),
  TURNLINE_EGRESS_DNS: servers.optional(),
}

export const EgressEnvSchema = lazySchema(() => z.object(EgressEnvShape))
export type EgressEnv = z.output<typeof EgressEnvSchema>

export function egressRulesFrom(env: EgressEnv): EgressRules {
  return {
    allow: env.TURNLINE_EGRESS_ALLOW ?? [],
    deny: env.TURNLINE_EGRESS_DENY ?? [],
    dnsServers: env.TURNLINE_EGRESS_DNS ?? [],
  }
}
