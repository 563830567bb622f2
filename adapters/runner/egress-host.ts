import { promises as dns } from 'node:dns'
import { networkInterfaces } from 'node:os'
import type { EgressRules } from '../../src/contract/egress-rules.ts'
import { type EgressHost, EgressPolicy } from '../../src/ports/egress-policy.ts'

const RESOLVE_TIMEOUT_MS = 5000

/**
 * The egress policy on this machine: names resolved by the system's resolver (getaddrinfo, so
 * /etc/hosts counts) or by the resolvers in TURNLINE_EGRESS_DNS; this host's own addresses read
 * from its interfaces at every check.
 */
export function nodeEgressPolicy(rules: EgressRules): EgressPolicy {
  return new EgressPolicy(rules, nodeEgressHost(rules.dnsServers))
}

function nodeEgressHost(servers: readonly string[]): EgressHost {
  let resolve: (name: string) => Promise<string[]>
  if (servers.length > 0) {
    const resolver = new dns.Resolver({ timeout: RESOLVE_TIMEOUT_MS, tries: 2 })
    resolver.setServers([...servers])
    resolve = async (name) => {
      const found = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)])
      return found.flatMap((r) => (r.status === 'fulfilled' ? r.value : []))
    }
  } else {
    resolve = async (name) =>
      (await dns.lookup(name, { all: true, verbatim: true })).map((a) => a.address)
  }
  return {
    resolve,
    // Loopback interfaces are refused as loopback; these are the others (a public IP included).
    ownAddresses: () =>
      Object.values(networkInterfaces()).flatMap((list) =>
        (list ?? []).filter((i) => !i.internal).map((i) => i.address),
      ),
    now: () => Date.now(),
  }
}
