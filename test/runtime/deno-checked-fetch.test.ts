import { networkInterfaces } from 'node:os'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { TurnlineClient } from '../../client/index.ts'
import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import type { DeliveryView } from '../../src/contract/callback-delivery.ts'
import { startTestDns, type TestDns } from '../support/dns-server.ts'
import { echoTool } from '../support/engine-deps.ts'
import { type HookReply, startHookReceiver } from '../support/hook-receiver.ts'
import { jsonCalls } from '../support/json-calls.ts'
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { refusedCallbackDestinations } from '../support/refused-destinations.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { startDeno } from '../support/runtimes.ts'
import { startHttpTarget } from '../support/sandbox-commands.ts'
import { startTlsTarget } from '../support/tls-target.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * `deno serve` with API keys (multi-tenant) checks every address a tenant directs a call to, as
 * `npm start` does: completion callbacks, HTTP tools, HTTP hooks and MCP servers go through the
 * address-checked fetch (adapters/egress/deno-egress-host.ts with the undici connector of
 * checked-fetch.ts), which resolves the name (here through a real DNS server,
 * TURNLINE_EGRESS_DNS), refuses loopback, link-local, private and unique-local addresses and
 * names that resolve to them, and connects to the address it checked. The receivers are on loopback, reachable only because the
 * operator allows exactly their address (TURNLINE_EGRESS_ALLOW), as the Node tests do.
 */
const KEY = 'acme-deno-egress-key-0123456789abcdef'
const TOOL_SECRET = 'deno-egress-deployment-secret'
let mock: MockOpenAI
let dns: TestDns
let receiver: Awaited<ReturnType<typeof startHookReceiver>>
let other: Awaited<ReturnType<typeof startHookReceiver>>
let tools: Awaited<ReturnType<typeof startToolReceiver>>
let otherTools: Awaited<ReturnType<typeof startToolReceiver>>
/** On every interface: which address a call reached shows (`checked.example` is 127.0.0.2). */
let everywhere: Awaited<ReturnType<typeof startHttpTarget>>
/** HTTPS with a certificate for `tls.example` that nothing trusts. */
let untrusted: Awaited<ReturnType<typeof startTlsTarget>>
let deno: RuntimeProcess

beforeAll(async () => {
  mock = await startMockOpenAI()
  const secret = await deriveTenantSecret(TOOL_SECRET, 'acme')
  receiver = await startHookReceiver(secret)
  other = await startHookReceiver(secret)
  tools = await startToolReceiver(secret)
  otherTools = await startToolReceiver(secret)
  everywhere = await startHttpTarget('reached the checked address', '0.0.0.0')
  untrusted = await startTlsTarget('tls.example')
  dns = await startTestDns({
    'rebound.example': ['127.0.0.1'],
    'tools.example': ['127.0.0.1'],
    'tls.example': ['127.0.0.1'],
    // Only the test DNS knows these names: a second lookup by the system would find nothing.
    'checked.example': ['127.0.0.2'],
  })
  const toolPort = new URL(tools.url).port
  deno = await startDeno({
    TURNLINE_STORE: 'memory',
    TURNLINE_API_KEYS: `${KEY}=acme`,
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'test-key',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_ALLOWED_HOSTS: '*',
    TURNLINE_CALLBACK_ALLOW_HTTP: '1',
    // Exactly these loopback destinations are the operator's to allow; the rest stays refused.
    TURNLINE_EGRESS_ALLOW: `${receiver.host},tools.example:${toolPort},127.0.0.2:${everywhere.port},tls.example:${untrusted.port}`,
    TURNLINE_EGRESS_DNS: dns.address,
    TURNLINE_CALLBACK_RETRY_FIRST_MS: '50',
    TURNLINE_CALLBACK_RETRY_MAX_MS: '200',
    TURNLINE_CALLBACK_SWEEP_MS: '200',
    TURNLINE_CALLBACK_TIMEOUT_MS: '3000',
  })
}, 60_000)

afterAll(async () => {
  await deno?.stop()
  await mock?.close()
  await dns?.close()
  for (const server of [receiver, other, tools, otherTools, everywhere, untrusted])
    await server?.close()
})

const { call } = jsonCalls(() => deno.url, { authorization: `Bearer ${KEY}` })

async function sessionWith(body: Record<string, unknown>): Promise<string> {
  const created = await call('POST', '/v1/sessions', body)
  expect(created.status, `${created.text}\n${deno.output()}`).toBe(201)
  return created.json().session_id as string
}

async function deliveries(session: string): Promise<DeliveryView[]> {
  const client = new TurnlineClient({ baseUrl: deno.url, apiKey: KEY })
  return (await client.listDeliveries(session)).deliveries as DeliveryView[]
}

describe('Deno with API keys: completion callbacks', () => {
  it('delivers a signed callback to a receiver the operator allows', async () => {
    const session = await sessionWith({ callback: { url: receiver.url('/hooks/deno') } })
    mock.enqueue({ text: 'done on deno' })
    const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' })
    expect(turn.status, turn.text).toBe(200)
    const hooks = () =>
      receiver.received.filter(
        (hook) => (hook.body.data as { session_id?: string })?.session_id === session,
      )
    await vi.waitUntil(() => hooks().length > 0, { timeout: 60_000, interval: 50 })
    expect(hooks()[0]).toMatchObject({
      path: '/hooks/deno',
      signatureValid: true,
      body: { type: 'turn.completed', data: { session_id: session, result: 'done on deno' } },
    })
    const [delivered] = await vi.waitUntil(
      async () => {
        const list = await deliveries(session)
        return list[0]?.state === 'delivered' ? list : undefined
      },
      { timeout: 60_000, interval: 100 },
    )
    expect(delivered?.attempts.at(-1)?.status_code).toBe(200)
  }, 150_000)

  it('retries a receiver that drops, times out and answers 500 first: one accepted delivery', async () => {
    const session = await sessionWith({ callback: { url: receiver.url('/hooks/retried') } })
    const replies: HookReply[] = [
      { destroy: true },
      { hold: new Promise(() => {}) },
      { status: 500 },
    ]
    const answers: number[] = []
    receiver.setReply((hook) => {
      if ((hook.body.data as { session_id?: string })?.session_id !== session) return {}
      const reply = replies[answers.length] ?? {}
      answers.push(reply.destroy || reply.hold ? 0 : (reply.status ?? 200))
      return reply
    })
    mock.enqueue({ text: 'retried on deno' })
    expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'go' })).status).toBe(200)
    const [delivered] = await vi.waitUntil(
      async () => {
        const list = await deliveries(session)
        return list[0]?.state === 'delivered' ? list : undefined
      },
      { timeout: 90_000, interval: 100 },
    )
    const attempts = delivered?.attempts ?? []
    expect(attempts).toHaveLength(4)
    expect(attempts[0]?.status_code).toBeUndefined()
    expect(attempts[1]?.error).toBe('no answer within 3000 ms')
    expect(attempts.slice(2).map((a) => a.status_code)).toEqual([500, 200])
    const hooks = receiver.received.filter((hook) => hook.path === '/hooks/retried')
    expect(hooks).toHaveLength(4)
    expect(new Set(hooks.map((hook) => hook.headers['webhook-id'])).size).toBe(1)
    expect(hooks.every((hook) => hook.signatureValid)).toBe(true)
    expect(answers.filter((status) => status === 200)).toHaveLength(1)
  }, 150_000)

  it('refuses loopback, link-local, private and rebinding destinations, and says why', async () => {
    const port = Number(other.host.split(':')[1])
    const targets = refusedCallbackDestinations(port)
    const sessions: [string, RegExp][] = []
    for (const [target, reason] of Object.entries(targets)) {
      const session = await sessionWith({ callback: { url: target } })
      mock.enqueue({ text: 'refused destination' })
      expect((await call('POST', `/v1/sessions/${session}/turns`, { input: 'x' })).status).toBe(200)
      sessions.push([session, reason])
    }
    for (const [session, reason] of sessions) {
      const [failed] = await vi.waitUntil(
        async () => {
          const list = await deliveries(session)
          return list[0]?.state === 'failed' ? list : undefined
        },
        { timeout: 60_000, interval: 100 },
      )
      expect(failed?.reason).toMatch(/^refused: /)
      expect(failed?.reason).toMatch(reason)
      expect(failed?.attempts).toHaveLength(1)
    }
    expect(other.received).toHaveLength(0)
  }, 150_000)
})

describe('Deno with API keys and TURNLINE_TOOL_ALLOWED_HOSTS=*: HTTP tools and MCP servers', () => {
  let toolCalls = 0

  /** A session whose HTTP tool points at `url`, one turn calling it: the tool's output. */
  async function callTool(url: string): Promise<string> {
    toolCalls += 1
    const session = await sessionWith({ tools: [echoTool(url)] })
    mock.enqueue(
      { toolCalls: [{ id: `call_tool_${toolCalls}`, name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'done' },
    )
    const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'look it up' })
    expect(turn.status, turn.text).toBe(200)
    const events = turn.json().events as {
      type: string
      item?: { type: string; output?: string }
    }[]
    const output = events.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
    return output?.item?.output ?? JSON.stringify(events)
  }

  it('reaches a tool at an allowed name, signed, at the address the check resolved', async () => {
    const output = await callTool(`http://tools.example:${new URL(tools.url).port}/tool`)
    expect(output).toContain('echo')
    expect(tools.calls).toHaveLength(1)
    expect(tools.calls[0]).toMatchObject({ signatureValid: true, body: { arguments: { q: 'x' } } })
    // The connection goes to the address the check resolved, not to the name again.
    expect(await callTool(`http://checked.example:${everywhere.port}/tool`)).toContain(
      'reached the checked address',
    )
    expect(everywhere.reachedAt()).toEqual(['127.0.0.2'])
  })

  it('keeps the name for TLS: SNI names it, and a certificate nothing vouches for is refused', async () => {
    const output = await callTool(`https://tls.example:${untrusted.port}/tool`)
    expect(output).toMatch(/could not be reached/)
    // The handshake reached the checked address asking for the URL's name; no request followed.
    expect(untrusted.serverNames()).toEqual(['tls.example'])
    expect(untrusted.requests()).toBe(0)
  })

  it('refuses a tool at loopback, link-local or a name that resolves to loopback', async () => {
    const port = new URL(otherTools.url).port
    const targets: [string, RegExp][] = [
      [`http://127.0.0.1:${port}/tool`, /refused: 127\.0\.0\.1 is a loopback address/],
      [`http://[::ffff:127.0.0.1]:${port}/tool`, /refused: .*a loopback address/],
      [`http://[::1]:${port}/tool`, /refused: .*a loopback address/],
      [
        `http://rebound.example:${port}/tool`,
        /rebound\.example:\d+ refused: rebound\.example resolves to 127\.0\.0\.1, a loopback address/,
      ],
      ['http://169.254.169.254/latest/meta-data/', /refused: 169\.254\.169\.254 is a link-local/],
      [`http://10.0.0.7:${port}/tool`, /refused: 10\.0\.0\.7 is a private network address/],
    ]
    for (const [url, reason] of targets) expect(await callTool(url)).toMatch(reason)
    expect(otherTools.calls).toHaveLength(0)
  })

  it("refuses this host's own non-loopback interface address (read with --allow-sys)", async () => {
    const own = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((i) => i.family === 'IPv4' && !i.internal)
    if (!own) throw new Error('this machine has no non-loopback IPv4 interface to test with')
    expect(await callTool(`http://${own.address}:${new URL(otherTools.url).port}/tool`)).toMatch(
      `refused: ${own.address} is one of this host's own addresses`,
    )
    expect(otherTools.calls).toHaveLength(0)
  })

  it('sends an HTTP hook to an allowed name, and refuses one at a name that resolves to loopback', async () => {
    const stopHook = (url: string) => ({ hooks: [{ event: 'stop', type: 'http', url }] })
    const before = tools.calls.length
    const reached = await sessionWith(
      stopHook(`http://tools.example:${new URL(tools.url).port}/hook`),
    )
    mock.enqueue({ text: 'nothing to do' })
    const first = await call('POST', `/v1/sessions/${reached}/turns`, { input: 'hello' })
    expect(first.status, first.text).toBe(200)
    expect(first.text).not.toMatch(/refused/)
    expect(tools.calls.slice(before).map((c) => c.signatureValid)).toEqual([true])

    const refused = await sessionWith(
      stopHook(`http://rebound.example:${new URL(otherTools.url).port}/hook`),
    )
    mock.enqueue({ text: 'nothing to do' })
    const second = await call('POST', `/v1/sessions/${refused}/turns`, { input: 'hello' })
    expect(second.text).toMatch(/refused: rebound\.example resolves to 127\.0\.0\.1, a loopback/)
    expect(otherTools.calls).toHaveLength(0)
  })

  it("refuses a session's MCP server at a name that resolves to loopback", async () => {
    const mcp: TestMcpServer = await startMcpServer()
    try {
      const port = new URL(mcp.url).port
      const session = await sessionWith({
        mcp_servers: [{ name: 'docs', url: `http://rebound.example:${port}/mcp` }],
      })
      mock.enqueue({ text: 'no tools today' })
      const turn = await call('POST', `/v1/sessions/${session}/turns`, { input: 'hello' })
      expect(turn.status, turn.text).toBe(200)
      expect(JSON.stringify(turn.json().warnings)).toMatch(
        /MCP server docs: .*refused: .*resolves to 127\.0\.0\.1, a loopback address/,
      )
      expect(mcp.requests).toHaveLength(0)
    } finally {
      await mcp.close()
    }
  })
})
