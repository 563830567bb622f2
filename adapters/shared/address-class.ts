import {
  formatIp,
  type IpAddress,
  type IpNetwork,
  inNetwork,
  low32,
  parseNetwork,
} from '../../src/shared/ip-address.ts'

/**
 * Which addresses are not the public internet: loopback, unspecified, private, shared (CGNAT),
 * link-local (cloud metadata), multicast, documentation, benchmarking and reserved ranges, and
 * every IPv6 address outside global unicast (2000::/3). IPv6 forms that carry an IPv4 address
 * (IPv4-mapped, IPv4-translated, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that address.
 */

function table(rows: [string, string][]): { network: IpNetwork; reason: string }[] {
  return rows.map(([cidr, reason]) => {
    const network = parseNetwork(cidr)
    if (!network) throw new Error(`bad network ${cidr}`)
    return { network, reason }
  })
}

const PRIVATE = 'a private network address (RFC 1918)'
const DOCUMENTATION = 'a reserved address (documentation)'

const IPV4 = table([
  ['0.0.0.0/8', 'the unspecified address ("this network", which reaches this host)'],
  ['10.0.0.0/8', PRIVATE],
  ['100.64.0.0/10', 'a shared address (carrier-grade NAT, RFC 6598)'],
  ['127.0.0.0/8', 'a loopback address'],
  ['169.254.0.0/16', 'a link-local address (where cloud metadata services answer)'],
  ['172.16.0.0/12', PRIVATE],
  ['192.0.0.0/24', 'a reserved address (IETF protocol assignments)'],
  ['192.0.2.0/24', DOCUMENTATION],
  ['192.88.99.0/24', 'a reserved address (6to4 relay anycast)'],
  ['192.168.0.0/16', PRIVATE],
  ['198.18.0.0/15', 'a reserved address (benchmarking)'],
  ['198.51.100.0/24', DOCUMENTATION],
  ['203.0.113.0/24', DOCUMENTATION],
  ['224.0.0.0/4', 'a multicast address'],
  ['240.0.0.0/4', 'a reserved address (including broadcast)'],
])

/** IPv6 forms that embed an IPv4 address in their low 32 bits, or (6to4) in bits 16–47. */
const EMBEDDING = table([
  ['::ffff:0:0/96', 'IPv4-mapped'],
  ['::ffff:0:0:0/96', 'IPv4-translated'],
  ['64:ff9b::/96', 'NAT64'],
  ['2002::/16', '6to4'],
])

const IPV6 = table([
  ['::/128', 'the unspecified address (which reaches this host)'],
  ['::1/128', 'a loopback address'],
  ['64:ff9b:1::/48', 'a private address (local-use NAT64)'],
  ['::/8', 'a reserved address (IPv4-compatible and other ::/8 forms)'],
  ['100::/64', 'a reserved address (discard-only)'],
  ['2001::/23', 'a reserved address (IETF protocol assignments, Teredo)'],
  ['2001:db8::/32', DOCUMENTATION],
  ['3fff::/20', DOCUMENTATION],
  ['fc00::/7', 'a unique local address (private IPv6)'],
  ['fe80::/10', 'a link-local address'],
  ['fec0::/10', 'a site-local address (deprecated, private)'],
  ['ff00::/8', 'a multicast address'],
])

const GLOBAL_UNICAST = parseNetwork('2000::/3') as IpNetwork

/** The IPv4 address an IPv6 address stands for, and the form's name; undefined for others. */
export function embeddedIpv4(ip: IpAddress): { ipv4: IpAddress; form: string } | undefined {
  if (ip.family !== 6) return undefined
  const form = EMBEDDING.find(({ network }) => inNetwork(ip, network))
  if (!form) return undefined
  const ipv4 =
    form.reason === '6to4'
      ? { family: 4 as const, value: (ip.value >> 80n) & 0xffffffffn }
      : low32(ip)
  return { ipv4, form: form.reason }
}

/** Why an address is not on the public internet, or undefined when it is. */
export function nonPublicReason(ip: IpAddress): string | undefined {
  if (ip.family === 4) return IPV4.find(({ network }) => inNetwork(ip, network))?.reason
  const embedded = embeddedIpv4(ip)
  if (embedded) {
    const inner = nonPublicReason(embedded.ipv4)
    return inner && `the ${embedded.form} form of ${formatIp(embedded.ipv4)}, ${inner}`
  }
  const special = IPV6.find(({ network }) => inNetwork(ip, network))?.reason
  if (special) return special
  return inNetwork(ip, GLOBAL_UNICAST) ? undefined : 'a reserved address (not global unicast)'
}
