import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { keyedEntryEnv, useEntryWithMock } from '../support/entry-with-mock.ts'
import { type FreezableProxy, startFreezableProxy } from '../support/freezable-proxy.ts'
import { requireServices } from '../support/services.ts'

/**
 * When the coordinator's Redis cannot be reached, what the transport says (`connect
 * ECONNREFUSED <host>:<port>`) names the deployment's internal address. `npm start` over
 * REDIS_URL through a proxy that is then closed: the client's answers (a turn's 503, its stream,
 * an exec run's `error` event, a streamed response's 503) say the coordinator is unreachable
 * without the address; the server log keeps it.
 */
const KEY = 'outage-key-0123456789abcdef'
const env = keyedEntryEnv('coordinator-outage', KEY, {
  TURNLINE_IO_BUDGET_MS: '600',
  TURNLINE_REDIS_NAMESPACE: `outage-${crypto.randomUUID()}`,
})
let proxy: FreezableProxy
let port: string
beforeAll(async () => {
  proxy = await startFreezableProxy(requireServices().redisUrl.replace(/^redis:/, 'http:'))
  port = new URL(proxy.url).port
  env.REDIS_URL = `redis://127.0.0.1:${port}`
})
const fx = useEntryWithMock('coordinator-outage', env)
afterAll(async () => {
  await proxy?.close()
})

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const post = (path: string, body: unknown, extra: Record<string, string> = {}) =>
  fetch(`${fx.url}${path}`, {
    method: 'POST',
    headers: { ...headers, ...extra },
    body: JSON.stringify(body),
  })

describe('an unreachable coordinator', () => {
  it("is answered without the coordinator's address, which the server log keeps", async () => {
    const { session_id: id } = (await (await post('/v1/sessions', {})).json()) as {
      session_id: string
    }
    await proxy.close()
    const address = `127.0.0.1:${port}`

    const turn = await post(`/v1/sessions/${id}/turns`, { input: 'hi' })
    expect(turn.status).toBe(503)
    const answer = (await turn.json()) as { error: { code: string; message: string } }
    expect(answer.error.code).toBe('coordinator_unavailable')
    expect(answer.error.message).toMatch(/^coordinator beginTurn: Redis is unreachable/)
    expect(answer.error.message).not.toContain(port)

    const streamed = await post(
      `/v1/sessions/${id}/turns`,
      { input: 'hi' },
      { accept: 'text/event-stream' },
    )
    expect(await streamed.text()).not.toContain(port)
    const run = await (await post('/v1/exec', { prompt: 'hi' })).text()
    expect(run).toContain('"type":"error","message":"coordinator')
    expect(run).not.toContain(port)
    // Refused before its stream opens (its start is announced with the turn's first event), as
    // the turn above is.
    const responded = await post('/v1/responses', { input: 'hi', stream: true })
    expect(responded.status).toBe(503)
    const response = await responded.text()
    expect(response).toContain('"code":"coordinator_unavailable"')
    expect(response).not.toContain(port)

    expect(fx.server.output()).toMatch(new RegExp(`"transport":"[^"]*ECONNREFUSED ${address}`))
  }, 60_000)
})
