/**
 * IP addresses and CIDR ranges, as 16 bytes (an IPv4 address is its IPv4-mapped IPv6 form,
 * `::ffff:a.b.c.d`, so `10.0.0.0/8` and `::ffff:10.0.0.0/104` are one range): the trusted
 * proxies (TURNLINE_TRUSTED_PROXIES) and the client addresses failed authentications are
 * counted by.
 */
export interface AddressRange {
  bytes: Uint8Array
  /** Leading bits that must match (0–128). */
  bits: number
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/
const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]

/** 16 bytes of an IPv4 or IPv6 address (a zone `%eth0` is ignored), or undefined. */
export function parseAddress(text: string): Uint8Array | undefined {
  const address = text
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/%.*$/, '')
  const v4 = ipv4(address)
  if (v4) return new Uint8Array([...MAPPED_PREFIX, ...v4])
  return ipv6(address)
}

function ipv4(text: string): number[] | undefined {
  const match = IPV4.exec(text)
  if (!match) return undefined
  const parts = match.slice(1).map(Number)
  return parts.every((part) => part <= 255) ? parts : undefined
}

function ipv6(text: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return undefined
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const groups = (half: string | undefined): number[] | undefined => {
    if (half === undefined || half === '') return []
    const out: number[] = []
    const parts = half.split(':')
    for (const [i, part] of parts.entries()) {
      // An IPv4 tail (::ffff:1.2.3.4) is the last two groups.
      const v4 = i === parts.length - 1 ? ipv4(part) : undefined
      if (v4) {
        out.push((v4[0] ?? 0) * 256 + (v4[1] ?? 0), (v4[2] ?? 0) * 256 + (v4[3] ?? 0))
      } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) {
        out.push(Number.parseInt(part, 16))
      } else {
        return undefined
      }
    }
    return out
  }
  const head = groups(halves[0])
  const tail = groups(halves[1])
  if (!head || !tail) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const all = [...head, ...new Array<number>(halves.length === 1 ? 0 : missing).fill(0), ...tail]
  const bytes = new Uint8Array(16)
  for (const [i, group] of all.entries()) {
    bytes[2 * i] = group >> 8
    bytes[2 * i + 1] = group & 0xff
  }
  return bytes
}

/** `address` (one address) or `address/bits` (bits of the address as written: /8 of IPv4). */
export function parseRange(text: string): AddressRange | undefined {
  const [address = '', bits, extra] = text.trim().split('/')
  if (extra !== undefined) return undefined
  const bytes = parseAddress(address)
  if (!bytes) return undefined
  const v4 = ipv4(address.trim()) !== undefined
  const width = v4 ? 32 : 128
  if (bits === undefined) return { bytes, bits: 128 }
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > width) return undefined
  return { bytes, bits: Number(bits) + (v4 ? 96 : 0) }
}

export function inRange(range: AddressRange, address: Uint8Array): boolean {
  for (let bit = 0; bit < range.bits; bit += 8) {
    const mask = range.bits - bit >= 8 ? 0xff : (0xff << (8 - (range.bits - bit))) & 0xff
    const i = bit / 8
    if (((range.bytes[i] ?? 0) & mask) !== ((address[i] ?? 0) & mask)) return false
  }
  return true
}

/**
 * How failures from an address are counted: an IPv4 address on its own, an IPv6 address by its
 * /64 (one subscriber's network: a host picks any address in it at will).
 */
export function addressGroup(address: Uint8Array): string {
  const mapped = MAPPED_PREFIX.every((byte, i) => address[i] === byte)
  if (mapped) return Array.from(address.subarray(12)).join('.')
  const groups: string[] = []
  for (let i = 0; i < 8; i += 2) {
    groups.push((((address[i] ?? 0) << 8) | (address[i + 1] ?? 0)).toString(16))
  }
  return `${groups.join(':')}::/64`
}
