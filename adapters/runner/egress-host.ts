import { promises as dns } from 'node:dns'
import { networkInterfaces } from 'node:os'
import type { EgressRules } from '../../src/contract/egress-rules.ts'
import { type EgressHost, EgressPolicy } from '../shared/egress-policy.ts'

const RESOLVE_TIMEOUT_MS = 5000
/**
 * getaddrinfo runs on libuv's thread pool (4 threads), which file operations share: names that
 * resolve slowly may hold at most this many of them, the rest wait their turn.
 */
const MAX_SYSTEM_LOOKUPS = 2

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
    const lookups = lookupSlots(MAX_SYSTEM_LOOKUPS)
    resolve = (name) =>
      lookups(async () =>
        (await dns.lookup(name, { all: true, verbatim: true })).map((a) => a.address),
      )
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

/** Runs at most `slots` of the given tasks at once, the others in arrival order. */
function lookupSlots(slots: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0
  const waiting: (() => void)[] = []
  return async (task) => {
    // A waiter is handed the slot of the task that ends, so the count never overshoots.
    if (running < slots) running += 1
    else await new Promise<void>((resolve) => waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else running -= 1
    }
  }
}
