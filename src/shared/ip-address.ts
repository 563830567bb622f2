/**
 * IP addresses and networks as numbers, for the egress rules (docs/configuration.md, "Network
 * egress"): parsing the forms a resolver or a configuration writes, formatting, prefix matching.
 * Pure: the runner's proxy and the server's checked fetch share it.
 */

export interface IpAddress {
  family: 4 | 6
  /** The address as an unsigned integer of 32 or 128 bits. */
  value: bigint
}

export interface IpNetwork {
  family: 4 | 6
  /** The first address of the network (host bits zero). */
  base: bigint
  prefix: number
}

const BITS = { 4: 32, 6: 128 } as const

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0n
  for (const part of parts) {
    // Decimal only, no leading zeros: `010` means 8 to inet_aton and 10 to a reader.
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined
    const byte = Number(part)
    if (byte > 255) return undefined
    value = (value << 8n) | BigInt(byte)
  }
  return value
}

function parseGroups(text: string): bigint[] | undefined {
  if (text === '') return []
  const groups: bigint[] = []
  const parts = text.split(':')
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1 && part.includes('.')) {
      const v4 = parseIpv4(part)
      if (v4 === undefined) return undefined
      groups.push(v4 >> 16n, v4 & 0xffffn)
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      groups.push(BigInt(`0x${part}`))
    } else {
      return undefined
    }
  }
  return groups
}

function parseIpv6(text: string): bigint | undefined {
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const head = parseGroups(halves[0] ?? '')
  const tail = halves.length === 2 ? parseGroups(halves[1] ?? '') : []
  if (head === undefined || tail === undefined) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const groups = [...head, ...Array<bigint>(missing).fill(0n), ...tail]
  return groups.reduce((value, group) => (value << 16n) | group, 0n)
}

/**
 * An IPv4 address in dotted decimal or an IPv6 address (with or without brackets; a zone such as
 * `%eth0` is dropped); undefined for anything else, host names included.
 */
export function parseIp(text: string): IpAddress | undefined {
  let candidate = text.trim()
  if (candidate.startsWith('[') && candidate.endsWith(']')) candidate = candidate.slice(1, -1)
  const zone = candidate.indexOf('%')
  if (zone >= 0) candidate = candidate.slice(0, zone)
  if (candidate.includes(':')) {
    const value = parseIpv6(candidate)
    return value === undefined ? undefined : { family: 6, value }
  }
  const value = parseIpv4(candidate)
  return value === undefined ? undefined : { family: 4, value }
}

/** `10.0.0.0/8`, `fd00::/8`, or a single address (a /32 or /128). */
export function parseNetwork(text: string): IpNetwork | undefined {
  const slash = text.lastIndexOf('/')
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash))
  if (!ip) return undefined
  const bits = BITS[ip.family]
  const prefixText = slash < 0 ? String(bits) : text.slice(slash + 1)
  if (!/^\d{1,3}$/.test(prefixText)) return undefined
  const prefix = Number(prefixText)
  if (prefix > bits) return undefined
  return { family: ip.family, base: ip.value & mask(bits, prefix), prefix }
}

function mask(bits: number, prefix: number): bigint {
  const all = (1n << BigInt(bits)) - 1n
  return prefix === 0 ? 0n : all ^ ((1n << BigInt(bits - prefix)) - 1n)
}

export function inNetwork(ip: IpAddress, network: IpNetwork): boolean {
  if (ip.family !== network.family) return false
  return (ip.value & mask(BITS[ip.family], network.prefix)) === network.base
}

export function sameIp(a: IpAddress, b: IpAddress): boolean {
  return a.family === b.family && a.value === b.value
}

/** The usual text: dotted decimal, or RFC 5952 IPv6 (lowercase, longest zero run as `::`). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) {
    return [24n, 16n, 8n, 0n].map((shift) => String((ip.value >> shift) & 0xffn)).join('.')
  }
  const groups = Array.from({ length: 8 }, (_, i) => (ip.value >> BigInt(112 - 16 * i)) & 0xffffn)
  let best = { start: -1, length: 0 }
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0n) {
      i += 1
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0n) j += 1
    if (j - i > best.length && j - i >= 2) best = { start: i, length: j - i }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (best.start < 0) return hex.join(':')
  const head = hex.slice(0, best.start).join(':')
  const tail = hex.slice(best.start + best.length).join(':')
  return `${head}::${tail}`
}

/** The IPv4 address in the low 32 bits of an IPv6 address (`value` of a /96 form). */
export function low32(ip: IpAddress): IpAddress {
  return { family: 4, value: ip.value & 0xffffffffn }
}
