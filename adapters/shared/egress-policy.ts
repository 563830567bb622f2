import {
  type EgressEntry,
  type EgressRules,
  egressEntries,
} from '../../src/contract/egress-rules.ts'
import {
  formatIp,
  type IpAddress,
  inNetwork,
  parseIp,
  sameIp,
} from '../../src/shared/ip-address.ts'
import { embeddedIpv4, nonPublicReason } from './address-class.ts'

/**
 * The egress rule every connection a tenant directs passes (docs/configuration.md, "Network
 * egress"): a destination is a name or an address and a port; the name is resolved here, every
 * address is checked, and the caller connects only to an address this answered — so a name
 * that resolves differently a moment later (DNS rebinding) changes nothing.
 *
 * In order: a name on the allow list is reachable whatever it resolves to; a name on the deny
 * list is refused; then each address is reachable when an allowed network holds it, and refused
 * when it is one of this host's own, on the deny list (or an address of a denied name), or not
 * on the public internet (address-class.ts). Nothing resolves: refused.
 */

/** What the policy needs from the platform. */
export interface EgressHost {
  /** Addresses of `name` (A and AAAA); empty or a rejection when it has none. */
  resolve(name: string): Promise<string[]>
  /** Every address of this host's interfaces, read when a check runs. */
  ownAddresses(): readonly string[]
  now(): number
}

export type EgressDecision =
  | {
      ok: true
      /** The checked addresses, in the resolver's order: connect to these, never to the name. */
      addresses: IpAddress[]
      /** `allowlist`: an operator's entry let it through; `public`: every check passed. */
      via: 'allowlist' | 'public'
    }
  | { ok: false; reason: string }

const DENIED_NAMES_TTL_MS = 30_000

function nameMatches(entry: EgressEntry, name: string, port: number): boolean {
  if (entry.kind !== 'name' || (entry.port !== undefined && entry.port !== port)) return false
  return entry.name === name || (entry.suffix && name.endsWith(`.${entry.name}`))
}

function networkMatches(entry: EgressEntry, ip: IpAddress, port: number): boolean {
  if (entry.kind !== 'network' || (entry.port !== undefined && entry.port !== port)) return false
  return candidates(ip).some((c) => inNetwork(c, entry.network))
}

/** An address and the IPv4 address it stands for, if any: both must pass. */
function candidates(ip: IpAddress): IpAddress[] {
  const embedded = embeddedIpv4(ip)
  return embedded ? [ip, embedded.ipv4] : [ip]
}

/** `Example.COM.` → `example.com`; `[::1]` → `::1`. */
export function normalizeHost(host: string): string {
  let name = host.trim().toLowerCase()
  if (name.startsWith('[') && name.endsWith(']')) name = name.slice(1, -1)
  return name.endsWith('.') ? name.slice(0, -1) : name
}

export class EgressPolicy {
  #denied: { at: number; addresses: { ip: IpAddress; name: string }[] } | undefined
  private readonly rules: { allow: EgressEntry[]; deny: EgressEntry[] }

  constructor(
    rules: EgressRules,
    private readonly host: EgressHost,
  ) {
    this.rules = { allow: egressEntries(rules.allow), deny: egressEntries(rules.deny) }
  }

  /** Whether `host:port` may be reached, and at which addresses. */
  async check(host: string, port: number): Promise<EgressDecision> {
    const name = normalizeHost(host)
    if (name === '') return { ok: false, reason: 'no host named' }
    if (!Number.isInteger(port) || port < 1 || port > 65535) {
      return { ok: false, reason: `port ${port} is not a valid port` }
    }
    const literal = parseIp(name)
    if (!literal && this.rules.allow.some((e) => nameMatches(e, name, port))) {
      const addresses = await this.#resolve(name)
      if (addresses.length === 0) return { ok: false, reason: `${name} does not resolve` }
      return { ok: true, addresses, via: 'allowlist' }
    }
    if (!literal && this.rules.deny.some((e) => nameMatches(e, name, port))) {
      return { ok: false, reason: `${name} is named internal by TURNLINE_EGRESS_DENY` }
    }
    const addresses = literal ? [literal] : await this.#resolve(name)
    if (addresses.length === 0) return { ok: false, reason: `${name} does not resolve` }
    const denied = await this.#deniedAddresses()
    const allowed: IpAddress[] = []
    let refusal: string | undefined
    let via: 'allowlist' | 'public' = 'public'
    for (const ip of addresses) {
      const verdict = this.#verdict(ip, port, denied)
      if (verdict === 'allowlist' || verdict === 'public') {
        allowed.push(ip)
        if (verdict === 'allowlist') via = 'allowlist'
      } else {
        refusal ??= literal
          ? `${name} is ${verdict}`
          : `${name} resolves to ${formatIp(ip)}, ${verdict}`
      }
    }
    if (allowed.length === 0) return { ok: false, reason: refusal ?? `${name} is refused` }
    return { ok: true, addresses: allowed, via }
  }

  #verdict(
    ip: IpAddress,
    port: number,
    denied: { ip: IpAddress; name: string }[],
  ): 'allowlist' | 'public' | string {
    if (this.rules.allow.some((e) => networkMatches(e, ip, port))) return 'allowlist'
    const forms = candidates(ip)
    const own = this.host
      .ownAddresses()
      .map((text) => parseIp(text))
      .filter((a): a is IpAddress => a !== undefined)
    if (forms.some((c) => own.some((o) => sameIp(c, o)))) return "one of this host's own addresses"
    if (this.rules.deny.some((e) => networkMatches(e, ip, port))) {
      return 'an address named internal by TURNLINE_EGRESS_DENY'
    }
    const name = denied.find((d) => forms.some((c) => sameIp(c, d.ip)))?.name
    if (name) return `an address of ${name}, named internal by TURNLINE_EGRESS_DENY`
    for (const form of forms) {
      const reason = nonPublicReason(form)
      if (reason) return reason
    }
    return 'public'
  }

  async #resolve(name: string): Promise<IpAddress[]> {
    const texts = await this.host.resolve(name).catch(() => [] as string[])
    return texts.map((t) => parseIp(t)).filter((a): a is IpAddress => a !== undefined)
  }

  /** The current addresses of the deny list's exact names, looked up at most every 30 s. */
  async #deniedAddresses(): Promise<{ ip: IpAddress; name: string }[]> {
    const names = this.rules.deny.flatMap((e) => (e.kind === 'name' && !e.suffix ? [e.name] : []))
    if (names.length === 0) return []
    const now = this.host.now()
    if (this.#denied && now - this.#denied.at < DENIED_NAMES_TTL_MS) return this.#denied.addresses
    const found = await Promise.all(
      names.map(async (name) => (await this.#resolve(name)).map((ip) => ({ ip, name }))),
    )
    this.#denied = { at: now, addresses: found.flat() }
    return this.#denied.addresses
  }
}
