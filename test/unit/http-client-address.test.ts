import { describe, expect, it } from 'vitest'
import {
  addressGroup,
  inRange,
  parseAddress,
  parseRange,
} from '../../functions/http/address-ranges.ts'
import { clientAddress, type PeerAddress } from '../../functions/http/client-address.ts'

const group = (text: string) => {
  const bytes = parseAddress(text)
  return bytes ? addressGroup(bytes) : undefined
}

describe('addresses and ranges', () => {
  it('reads IPv4 and IPv6 in their usual forms, and nothing else', () => {
    const groups: [string, string][] = [
      ['203.0.113.7', '203.0.113.7'],
      ['::ffff:203.0.113.7', '203.0.113.7'],
      ['[::ffff:cb00:7107]', '203.0.113.7'],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
      ['2001:DB8:1:2::', '2001:db8:1:2::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
    ]
    for (const [address, counted] of groups) {
      expect({ address, group: group(address) }).toEqual({ address, group: counted })
    }
    for (const bad of ['', '256.1.1.1', '1.2.3', '1:2:3', '1::2::3', '1:2:3:4:5:6:7:8:9', 'x::1']) {
      expect({ bad, parsed: parseAddress(bad) }).toEqual({ bad, parsed: undefined })
    }
    expect(parseAddress('1:2:3:4:5:6:7::')).toBeDefined()
    expect(parseAddress('::2:3:4:5:6:7:8')).toBeDefined()
    expect(parseAddress('1:2:3:4:5:6:7:8::')).toBeUndefined()
  })

  it('matches CIDR ranges, IPv4 ones also against IPv4-mapped addresses', () => {
    const contains = (range: string, address: string) => {
      const r = parseRange(range)
      const a = parseAddress(address)
      if (!r || !a) throw new Error(`unparsable: ${range} ${address}`)
      return inRange(r, a)
    }
    const cases: [string, string, boolean][] = [
      ['10.0.0.0/8', '10.200.3.4', true],
      ['10.0.0.0/8', '::ffff:10.1.1.1', true],
      ['10.0.0.0/8', '11.0.0.1', false],
      ['172.16.0.0/12', '172.31.255.255', true],
      ['172.16.0.0/12', '172.32.0.0', false],
      ['192.0.2.10', '192.0.2.10', true],
      ['192.0.2.10', '192.0.2.11', false],
      ['0.0.0.0/0', '8.8.8.8', true],
      ['fd00::/8', 'fd12:3456::1', true],
      ['fd00::/8', 'fe80::1', false],
      ['::1', '::1', true],
    ]
    for (const [range, address, inside] of cases) {
      expect({ range, address, inside: contains(range, address) }).toEqual({
        range,
        address,
        inside,
      })
    }
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/8/1', 'proxy.lan', '10.0.0.0/x']) {
      expect({ bad, range: parseRange(bad) }).toEqual({ bad, range: undefined })
    }
  })
})

describe('the client of a request', () => {
  const peerOf =
    (address: string | undefined): PeerAddress =>
    () =>
      address
  const request = (forwarded?: string) =>
    new Request('http://localhost/v1/sessions', {
      headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
    })
  const proxies = ['10.0.0.0/8', '192.0.2.1'].map((range) => {
    const parsed = parseRange(range)
    if (!parsed) throw new Error(range)
    return parsed
  })

  it('is the peer, whatever X-Forwarded-For says, unless the peer is a trusted proxy', () => {
    expect(clientAddress(request('1.1.1.1'), undefined, peerOf('203.0.113.7'), [])).toBe(
      '203.0.113.7',
    )
    expect(clientAddress(request('1.1.1.1'), undefined, peerOf('203.0.113.7'), proxies)).toBe(
      '203.0.113.7',
    )
    expect(clientAddress(request(), undefined, peerOf(undefined), proxies)).toBe('unknown')
    expect(clientAddress(request(), undefined, undefined, proxies)).toBe('unknown')
  })

  it('behind trusted proxies: the right-most address that is not one of them', () => {
    const via = (forwarded: string, peer = '10.1.2.3') =>
      clientAddress(request(forwarded), undefined, peerOf(peer), proxies)
    expect(via('198.51.100.9')).toBe('198.51.100.9')
    // A client's own X-Forwarded-For entries are further left: never reached.
    expect(via('6.6.6.6, 198.51.100.9')).toBe('198.51.100.9')
    expect(via('6.6.6.6, 198.51.100.9, 192.0.2.1, 10.9.9.9')).toBe('198.51.100.9')
    // Nothing usable forwarded: the last proxy is what is known.
    expect(via('')).toBe('10.1.2.3')
    expect(via('garbage, 10.9.9.9')).toBe('10.9.9.9')
    expect(via('2001:db8:1:2::7')).toBe('2001:db8:1:2::/64')
  })
})
