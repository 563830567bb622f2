import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkedFetch } from '../../adapters/egress/checked-fetch.ts'
import { nodeEgressPolicy } from '../../adapters/runner/egress-host.ts'
import { EgressEnvSchema, egressRulesFrom } from '../../src/contract/egress-rules.ts'
import { EgressRefused } from '../../src/contract/transport-failure.ts'
import { startTestDns, type TestDns } from '../support/dns-server.ts'
import { startHttpTarget } from '../support/sandbox-commands.ts'

/**
 * The fetch of tenant-directed calls on Node, against real servers and a real DNS server: every
 * connection — the first and each redirect — is checked when it is made.
 */
let dns: TestDns
let target: Server
let redirector: Server
let targetPort: number
let redirectorPort: number
let hits = 0
/** On every interface; the test DNS puts `localhost` at 127.0.0.2, /etc/hosts at 127.0.0.1. */
let everywhere: Awaited<ReturnType<typeof startHttpTarget>>
let location = ''

const listen = (server: Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  )

beforeAll(async () => {
  dns = await startTestDns({
    'rebound.example': ['127.0.0.1'],
    'mirror.example': ['127.0.0.1'],
    localhost: ['127.0.0.2'],
  })
  everywhere = await startHttpTarget('reached', '0.0.0.0')
  target = createServer((_req, res) => {
    hits += 1
    res.end('internal secret')
  })
  redirector = createServer((_req, res) => {
    res.writeHead(302, { location })
    res.end()
  })
  targetPort = await listen(target)
  redirectorPort = await listen(redirector)
})

afterAll(async () => {
  await dns?.close()
  await everywhere?.close()
  target?.closeAllConnections()
  redirector?.closeAllConnections()
  await new Promise((resolve) => target?.close(resolve))
  await new Promise((resolve) => redirector?.close(resolve))
})

const fetchWith = (allow: string) =>
  checkedFetch(
    nodeEgressPolicy(
      egressRulesFrom(
        EgressEnvSchema.parse({ TURNLINE_EGRESS_ALLOW: allow, TURNLINE_EGRESS_DNS: dns.address }),
      ),
    ),
  )

describe('checked fetch', () => {
  it('refuses loopback by literal, by mapped literal and by a name that resolves there', async () => {
    const fetchChecked = fetchWith('')
    for (const url of [
      `http://127.0.0.1:${targetPort}/`,
      `http://[::ffff:127.0.0.1]:${targetPort}/`,
      `http://rebound.example:${targetPort}/`,
    ]) {
      const error = await fetchChecked(url).catch((e: unknown) => e)
      expect(error, url).toBeInstanceOf(EgressRefused)
      expect(String(error)).toMatch(/refused: .*a loopback address/)
    }
    expect(hits).toBe(0)
  })

  it('reaches an allowlisted host, by name and by address', async () => {
    const fetchChecked = fetchWith(`mirror.example:${targetPort},127.0.0.1:${redirectorPort}`)
    const response = await fetchChecked(`http://mirror.example:${targetPort}/`)
    expect(await response.text()).toBe('internal secret')
    expect(hits).toBe(1)
  })

  it('connects to the address it checked, never to the name again', async () => {
    // A second lookup of `localhost` (the system's) would answer 127.0.0.1, which is refused.
    const fetchChecked = fetchWith(`127.0.0.2:${everywhere.port}`)
    const response = await fetchChecked(`http://localhost:${everywhere.port}/`)
    expect(await response.text()).toBe('reached\n')
    expect(everywhere.reachedAt()).toEqual(['127.0.0.2'])
    const refused = await fetchChecked(`http://127.0.0.1:${everywhere.port}/`).catch((e) => e)
    expect(refused).toBeInstanceOf(EgressRefused)
    expect(everywhere.requests()).toBe(1)
  })

  it('checks every redirect: an allowlisted host cannot send the call to a refused one', async () => {
    const fetchChecked = fetchWith(`127.0.0.1:${redirectorPort}`)
    for (const next of [
      `http://127.0.0.1:${targetPort}/`,
      `http://rebound.example:${targetPort}/`,
    ]) {
      location = next
      const manual = await fetchChecked(`http://127.0.0.1:${redirectorPort}/`, {
        redirect: 'manual',
      })
      expect(manual.status).toBe(302)
      const followed = await fetchChecked(`http://127.0.0.1:${redirectorPort}/`).catch(
        (e: unknown) => e,
      )
      expect(followed).toBeInstanceOf(EgressRefused)
    }
    expect(hits).toBe(1)
  })
})
