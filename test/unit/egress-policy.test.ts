import { describe, expect, it } from 'vitest'
import { nonPublicReason } from '../../adapters/shared/address-class.ts'
import { EgressPolicy } from '../../adapters/shared/egress-policy.ts'
import {
  EgressEnvSchema,
  type EgressRules,
  egressRulesFrom,
  NO_EGRESS_RULES,
  parseEgressEntry,
} from '../../src/contract/egress-rules.ts'
import { formatIp, parseIp, parseNetwork } from '../../src/shared/ip-address.ts'

const ip = (text: string) => {
  const parsed = parseIp(text)
  if (!parsed) throw new Error(`not an address: ${text}`)
  return parsed
}

describe('IP addresses', () => {
  it('parses and formats IPv4 and IPv6, with the embedded IPv4 forms', () => {
    for (const [text, canonical] of [
      ['127.0.0.1', '127.0.0.1'],
      ['::1', '::1'],
      ['[::1]', '::1'],
      ['fe80::1%eth0', 'fe80::1'],
      ['::ffff:127.0.0.1', '::ffff:7f00:1'],
      ['2001:DB8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
      ['0:0:0:0:0:0:0:0', '::'],
      ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ]) {
      expect(formatIp(ip(text as string))).toBe(canonical)
    }
  })

  it('refuses what is not an address: names, octal or short forms, bad groups', () => {
    for (const text of [
      'localhost',
      '010.0.0.1',
      '127.1',
      '0x7f.0.0.1',
      '256.0.0.1',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      'g::1',
      '',
    ]) {
      expect(parseIp(text), text).toBeUndefined()
    }
  })

  it('parses networks and zeroes host bits', () => {
    expect(parseNetwork('10.1.2.3/8')).toEqual({ family: 4, base: ip('10.0.0.0').value, prefix: 8 })
    expect(parseNetwork('fd00::/8')?.prefix).toBe(8)
    expect(parseNetwork('10.0.0.0/33')).toBeUndefined()
    expect(parseNetwork('1.2.3.4')?.prefix).toBe(32)
  })
})

describe('which addresses are the public internet', () => {
  it.each([
    ['0.0.0.0', /unspecified/],
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['10.1.2.3', /private network/],
    ['172.31.255.255', /private network/],
    ['192.168.1.1', /private network/],
    ['100.64.0.1', /carrier-grade NAT/],
    ['169.254.169.254', /link-local .*metadata/],
    ['192.0.0.8', /IETF protocol/],
    ['192.0.2.2', /documentation/],
    ['198.18.0.1', /benchmarking/],
    ['224.0.0.1', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['::ffff:127.0.0.1', /IPv4-mapped form of 127\.0\.0\.1, a loopback/],
    ['::ffff:0:a00:1', /IPv4-translated form of 10\.0\.0\.1, a private/],
    ['64:ff9b::a9fe:a9fe', /NAT64 form of 169\.254\.169\.254, a link-local/],
    ['2002:7f00:1::1', /6to4 form of 127\.0\.0\.1/],
    ['::127.0.0.1', /IPv4-compatible/],
    ['64:ff9b:1::1', /local-use NAT64/],
    ['2001::1', /Teredo/],
    ['2001:db8::1', /documentation/],
    ['fc00::1', /unique local/],
    ['fd12:3456::1', /unique local/],
    ['fe80::1', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['4000::1', /not global unicast/],
  ])('%s is not: %s', (text, reason) => {
    expect(nonPublicReason(ip(text))).toMatch(reason)
  })

  it.each([
    '1.1.1.1',
    '8.8.8.8',
    '172.32.0.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
  ])('%s is', (text) => {
    expect(nonPublicReason(ip(text))).toBeUndefined()
  })
})

describe('egress entries', () => {
  it('reads names, name:port, suffixes, addresses, [v6]:port and networks', () => {
    expect(parseEgressEntry('Mirror.Example.com:443')).toEqual({
      kind: 'name',
      name: 'mirror.example.com',
      suffix: false,
      port: 443,
    })
    expect(parseEgressEntry('.internal')).toMatchObject({
      kind: 'name',
      name: 'internal',
      suffix: true,
    })
    expect(parseEgressEntry('10.0.0.5:8080')).toMatchObject({ kind: 'network', port: 8080 })
    expect(parseEgressEntry('[fd00::5]:443')).toMatchObject({ kind: 'network', port: 443 })
    expect(parseEgressEntry('fd00::/8')).toMatchObject({ kind: 'network' })
    expect(parseEgressEntry('100.64.0.0/10')).toMatchObject({ kind: 'network' })
  })

  it('refuses what it cannot read, and the variables name the problem', () => {
    for (const bad of ['*', 'a b', 'host:0', 'host:99999', '10.0.0.0/40', '[::1', 'http://x']) {
      expect(typeof parseEgressEntry(bad), bad).toBe('string')
    }
    expect(EgressEnvSchema.safeParse({ TURNLINE_EGRESS_DENY: 'ok.example,*' }).success).toBe(false)
    expect(EgressEnvSchema.safeParse({ TURNLINE_EGRESS_DNS: 'dns.example' }).success).toBe(false)
    const env = EgressEnvSchema.parse({ TURNLINE_EGRESS_DNS: '1.1.1.1, [::1]:5353, 10.0.0.2:53' })
    expect(egressRulesFrom(env).dnsServers).toEqual(['1.1.1.1', '[::1]:5353', '10.0.0.2:53'])
  })
})

function policy(
  rules: Partial<EgressRules>,
  names: Record<string, string[]>,
  own: string[] = ['192.0.2.2', '203.0.113.7', 'fe80::1'],
) {
  const lookups: string[] = []
  const p = new EgressPolicy(
    { ...NO_EGRESS_RULES, ...rules },
    {
      resolve: async (name) => {
        lookups.push(name)
        const found = names[name]
        if (!found) throw new Error('ENOTFOUND')
        return found
      },
      ownAddresses: () => own,
      now: () => 0,
    },
  )
  return { policy: p, lookups }
}

const entries = (text: string) =>
  EgressEnvSchema.parse({ TURNLINE_EGRESS_ALLOW: text }).TURNLINE_EGRESS_ALLOW ?? []
const denied = entries

describe('the egress policy', () => {
  it('lets public addresses through and answers the checked addresses to connect to', async () => {
    const { policy: p } = policy({}, { 'example.com': ['93.184.215.14', '2606:2800:21f:cb07::1'] })
    const decision = await p.check('Example.COM.', 443)
    expect(decision).toMatchObject({ ok: true, via: 'public' })
    expect(decision.ok && decision.addresses.map(formatIp)).toEqual([
      '93.184.215.14',
      '2606:2800:21f:cb07::1',
    ])
  })

  it('refuses a name whose every address is internal, naming the address and why', async () => {
    const { policy: p } = policy({}, { 'api.public-looking.example': ['127.0.0.1', '::1'] })
    expect(await p.check('api.public-looking.example', 80)).toEqual({
      ok: false,
      reason: 'api.public-looking.example resolves to 127.0.0.1, a loopback address',
    })
  })

  it('keeps only the public addresses of a name that mixes them (no connection to the rest)', async () => {
    const { policy: p } = policy({}, { mixed: ['10.0.0.1', '1.1.1.1', '169.254.169.254'] })
    const decision = await p.check('mixed', 80)
    expect(decision.ok && decision.addresses.map(formatIp)).toEqual(['1.1.1.1'])
  })

  it("refuses this host's own addresses, in any form, before their address class", async () => {
    const { policy: p } = policy({}, {}, ['198.51.100.1', '5.6.7.8'])
    expect(await p.check('5.6.7.8', 6379)).toEqual({
      ok: false,
      reason: "5.6.7.8 is one of this host's own addresses",
    })
    expect(await p.check('[::ffff:5.6.7.8]', 80)).toMatchObject({
      ok: false,
      reason: /own addresses/,
    })
  })

  it('refuses names that do not resolve, invalid ports and empty hosts', async () => {
    const { policy: p } = policy({}, {})
    expect(await p.check('nowhere.example', 80)).toMatchObject({
      ok: false,
      reason: /does not resolve/,
    })
    expect(await p.check('1.1.1.1', 0)).toMatchObject({ ok: false, reason: /not a valid port/ })
    expect(await p.check('', 80)).toMatchObject({ ok: false })
  })

  it('keeps allowlisted names (with their port) and networks reachable, and nothing more', async () => {
    const { policy: p } = policy(
      { allow: entries('mirror.internal:443,.corp.example,10.9.0.0/16,127.0.0.1:8080') },
      {
        'mirror.internal': ['10.1.1.1'],
        'git.corp.example': ['192.168.3.3'],
        'svc.x': ['10.9.4.4'],
      },
    )
    expect(await p.check('mirror.internal', 443)).toMatchObject({ ok: true, via: 'allowlist' })
    expect(await p.check('mirror.internal', 80)).toMatchObject({ ok: false, reason: /private/ })
    expect(await p.check('git.corp.example', 22)).toMatchObject({ ok: true, via: 'allowlist' })
    expect(await p.check('svc.x', 80)).toMatchObject({ ok: true, via: 'allowlist' })
    expect(await p.check('127.0.0.1', 8080)).toMatchObject({ ok: true, via: 'allowlist' })
    expect(await p.check('[::ffff:127.0.0.1]', 8080)).toMatchObject({ ok: true, via: 'allowlist' })
    expect(await p.check('127.0.0.1', 6379)).toMatchObject({ ok: false, reason: /loopback/ })
  })

  it('refuses what the deployment names internal: names, suffixes, networks, and the addresses of denied names', async () => {
    const { policy: p, lookups } = policy(
      { deny: denied('s3.internal.example,.corp,52.0.0.0/8') },
      {
        's3.internal.example': ['54.1.2.3'],
        'other-name.example': ['54.1.2.3'],
        'x.example': ['52.1.1.1'],
      },
    )
    expect(await p.check('s3.internal.example', 443)).toMatchObject({
      ok: false,
      reason: /named internal/,
    })
    expect(await p.check('a.b.corp', 443)).toMatchObject({ ok: false, reason: /named internal/ })
    expect(await p.check('x.example', 443)).toMatchObject({ ok: false, reason: /named internal/ })
    expect(await p.check('other-name.example', 443)).toMatchObject({
      ok: false,
      reason: /resolves to 54\.1\.2\.3, an address of s3\.internal\.example/,
    })
    // The denied name's addresses are looked up once per 30 s, not per check.
    await p.check('other-name.example', 443)
    expect(lookups.filter((n) => n === 's3.internal.example')).toHaveLength(1)
  })
})
