import type { EgressRules } from '../../src/contract/egress-rules.ts'
import { inNetwork, parseIp, parseNetwork } from '../../src/shared/ip-address.ts'
import { type EgressHost, EgressPolicy } from '../shared/egress-policy.ts'

/** The part of the Deno namespace this file uses (tsc here has no Deno types). */
declare const Deno: {
  resolveDns(
    query: string,
    type: 'A' | 'AAAA',
    options?: { nameServer?: { ipAddr: string; port?: number }; signal?: AbortSignal },
  ): Promise<string[]>
  networkInterfaces(): { address: string; family: 'IPv4' | 'IPv6' }[]
}

const RESOLVE_TIMEOUT_MS = 5000
const LOOPBACK = ['127.0.0.0/8', '::1/128'].flatMap((text) => parseNetwork(text) ?? [])

/** Not a loopback interface's (those are refused as loopback, as Node's `internal` ones are). */
const notLoopback = (address: string) => {
  const ip = parseIp(address)
  return ip !== undefined && !LOOPBACK.some((network) => inNetwork(ip, network))
}

/** A resolver of TURNLINE_EGRESS_DNS (`ip`, `ip:port`, `[ip6]:port`, `ip6`) as Deno takes it. */
export function denoNameServer(text: string): { ipAddr: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text)
  if (bracketed) return { ipAddr: bracketed[1] ?? '', port: Number(bracketed[2] ?? 53) }
  if (parseIp(text)?.family === 6) return { ipAddr: text, port: 53 }
  const [ipAddr = '', port] = text.split(':')
  return { ipAddr, port: Number(port ?? 53) }
}

/**
 * The egress policy in a Deno process (`deno serve`): the same rules as on Node
 * (adapters/shared/egress-policy.ts), with names resolved by `Deno.resolveDns` — the system's
 * configuration and /etc/hosts, or the resolvers of TURNLINE_EGRESS_DNS, each tried in order
 * until one answers — and this host's own addresses read from `Deno.networkInterfaces()` at
 * every check, which needs `--allow-sys=networkInterfaces` (without it every check fails, and
 * the Deno entry refuses to start where it needs one: deno-permissions.ts).
 */
export function denoEgressPolicy(rules: EgressRules): EgressPolicy {
  return new EgressPolicy(rules, denoEgressHost(rules.dnsServers))
}

function denoEgressHost(servers: readonly string[]): EgressHost {
  const nameServers = servers.map(denoNameServer)
  const lookup = async (name: string, nameServer?: { ipAddr: string; port: number }) => {
    const signal = AbortSignal.timeout(RESOLVE_TIMEOUT_MS)
    const options = { signal, ...(nameServer ? { nameServer } : {}) }
    const found = await Promise.allSettled([
      Deno.resolveDns(name, 'A', options),
      Deno.resolveDns(name, 'AAAA', options),
    ])
    const addresses = found.flatMap((r) => (r.status === 'fulfilled' ? r.value : []))
    // A name with no records of a type is NotFound; any other failure says the resolver did not
    // answer, so the next one is asked.
    const unanswered = found.some(
      (r) => r.status === 'rejected' && (r.reason as { name?: string })?.name !== 'NotFound',
    )
    return { addresses, unanswered }
  }
  const resolve = async (name: string): Promise<string[]> => {
    if (nameServers.length === 0) return (await lookup(name)).addresses
    for (const server of nameServers) {
      const { addresses, unanswered } = await lookup(name, server)
      if (addresses.length > 0 || !unanswered) return addresses
    }
    return []
  }
  return {
    resolve,
    // Loopback interfaces are refused as loopback; the others include a public address.
    ownAddresses: () =>
      Deno.networkInterfaces()
        .map((i) => i.address)
        .filter(notLoopback),
    now: () => Date.now(),
  }
}
