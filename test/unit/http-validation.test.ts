import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'

const api = new FakeSessionApi()
const app = createApp({
  api,
  auth: { keys: [] },
  limits: { maxBytes: 64 * 1024, timeoutMs: 500 },
  log: () => {},
})
let id = ''
let server: RunningServer

beforeAll(async () => {
  id = (await api.createSession('local', {})).session_id
  server = await serveApp(app)
})
afterAll(() => server.close())

interface Rejection {
  status: number
  code: string
  message: string
  field?: string
}

async function rejection(res: Response): Promise<Rejection> {
  const body = (await res.json()) as {
    error: {
      code: string
      message: string
      details?: { field?: string; issues?: { field: string }[] }
    }
  }
  const field = body.error.details?.field ?? body.error.details?.issues?.[0]?.field
  return {
    status: res.status,
    code: body.error.code,
    message: body.error.message,
    ...(field ? { field } : {}),
  }
}

const post = (path: string, body: BodyInit | undefined, headers: Record<string, string> = {}) =>
  app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
  })

describe('request bodies', () => {
  it('rejects malformed JSON, naming the problem', async () => {
    const r = await rejection(await post('/v1/sessions', '{"workspace": '))
    expect(r).toMatchObject({ status: 400, code: 'invalid_input', field: 'body' })
    expect(r.message).toMatch(/not valid JSON/)
  })

  it('rejects a missing or wrong Content-Type and a foreign charset', async () => {
    const missing = await app.request('/v1/sessions', { method: 'POST', body: '{}' })
    // fetch adds text/plain for a string body; send bytes to omit the header entirely
    const bare = await app.request(
      new Request('http://localhost/v1/sessions', {
        method: 'POST',
        body: new TextEncoder().encode('{}'),
      }),
    )
    for (const res of [missing, bare]) {
      expect(await rejection(res)).toMatchObject({ status: 400, field: 'header.content-type' })
    }
    const form = await post('/v1/sessions', 'a=b', {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(await rejection(form)).toMatchObject({ status: 400, field: 'header.content-type' })
    const latin = await post('/v1/sessions', '{}', {
      'content-type': 'application/json; charset=latin1',
    })
    const charset = await rejection(latin)
    expect(charset).toMatchObject({ status: 400, field: 'header.content-type' })
    expect(charset.message).toMatch(/utf-8/)
    const vendor = await post('/v1/sessions', '{}', {
      'content-type': 'application/vnd.api+json; charset=UTF-8',
    })
    expect(vendor.status).toBe(201)
  })

  it('rejects invalid UTF-8', async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x77, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])
    const r = await rejection(await post('/v1/sessions', bytes))
    expect(r).toMatchObject({ status: 400, message: 'request body is not valid UTF-8' })
  })

  it('rejects unknown fields and wrong types, naming the field', async () => {
    const unknown = await rejection(await post('/v1/sessions', '{"workspace":"a","colour":1}'))
    expect(unknown).toMatchObject({ status: 400, field: 'body' })
    expect(unknown.message).toContain('unknown field "colour"')

    const nested = await rejection(
      await post('/v1/sessions', JSON.stringify({ limits: { max_turns: 'ten' } })),
    )
    expect(nested).toMatchObject({ status: 400, field: 'body.limits.max_turns' })

    const tool = await rejection(
      await post(
        '/v1/sessions',
        JSON.stringify({ tools: [{ type: 'http', name: 'x', url: 'ftp://h/x' }] }),
      ),
    )
    expect(tool.field).toBe('body.tools[0].url')

    const turn = await rejection(await post(`/v1/sessions/${id}/turns`, '{"input":42}'))
    expect(turn).toMatchObject({ status: 400, field: 'body.input' })
    const noLimit = await rejection(await post(`/v1/sessions/${id}/turns`, '{"limits":{}}'))
    expect(noLimit).toMatchObject({ status: 400, field: 'body.limits' })
    const badLimit = await rejection(
      await post(`/v1/sessions/${id}/fork`, '{"limits":{"max_turns":0}}'),
    )
    expect(badLimit).toMatchObject({ status: 400, field: 'body.limits.max_turns' })
    const notALimit = await rejection(
      await post(`/v1/sessions/${id}/turns`, '{"limits":{"budget_warning_threshold":0.5}}'),
    )
    expect(notALimit.message).toContain('unknown field "budget_warning_threshold"')
    for (const body of ['[1,2]', 'null', '"x"', '0']) {
      const r = await rejection(await post(`/v1/sessions/${id}/turns`, body))
      expect(r, body).toMatchObject({ status: 400, field: 'body' })
    }
    const extra = await rejection(await post(`/v1/sessions/${id}/complete`, '{"force":true}'))
    expect(extra.message).toContain('unknown field "force"')
  })

  it('requires the exec prompt', async () => {
    const r = await rejection(await post('/v1/exec', undefined))
    expect(r).toMatchObject({ status: 400, field: 'body.prompt' })
  })

  it('rejects documents nested too deeply before walking them', async () => {
    const deep = `{"metadata":${'['.repeat(5000)}${']'.repeat(5000)}}`
    const r = await rejection(await post('/v1/sessions', deep))
    expect(r.message).toMatch(/nested deeper than 64/)
  })

  it('rejects an oversize body by Content-Length and by the bytes actually sent', async () => {
    const big = JSON.stringify({ instructions: 'x'.repeat(70 * 1024) })
    const declared = await fetch(`${server.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: big,
    })
    expect(await rejection(declared)).toMatchObject({ status: 413, code: 'payload_too_large' })

    const chunks = [
      new TextEncoder().encode(big.slice(0, 40_000)),
      new TextEncoder().encode(big.slice(40_000)),
    ]
    const streamed = await fetch(`${server.url}/v1/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({
        pull(controller) {
          const next = chunks.shift()
          if (next) controller.enqueue(next)
          else controller.close()
        },
      }),
      duplex: 'half',
    } as RequestInit)
    expect(await rejection(streamed)).toMatchObject({ status: 413, code: 'payload_too_large' })
  })

  it('gives up on a body that never arrives', async () => {
    const res = await app.request('/v1/sessions', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: new ReadableStream({ start() {} }),
      duplex: 'half',
    } as RequestInit)
    expect((await rejection(res)).message).toMatch(/not received within 500 ms/)
  })

  it('gives up on a body of declared length that stops short, over a socket', async () => {
    const { port } = new URL(server.url)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1')
      let text = ''
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8')
      })
      socket.on('error', reject)
      socket.on('close', () => resolve(text))
      socket.write(
        `POST /v1/sessions HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"wor`,
      )
      setTimeout(() => socket.end(), 2000)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(answer).toMatch(/not received within 500 ms/)
  })

  it('rejects a Content-Length that is not a number', async () => {
    const r = await rejection(await post('/v1/sessions', '{}', { 'content-length': 'lots' }))
    expect(r).toMatchObject({ status: 400, field: 'header.content-length' })
  })
})

describe('path, query and headers', () => {
  it('rejects session ids outside the store segment rule', async () => {
    for (const bad of [
      '...',
      '.hidden',
      '-x',
      'a%2Fb',
      '..%2F..%2Fetc',
      `${'a'.repeat(129)}`,
      'a..b',
      '%00',
      'a%20b',
    ]) {
      const res = await app.request(`/v1/sessions/${bad}`)
      expect(await rejection(res), bad).toMatchObject({ status: 400, field: 'path.id' })
    }
    expect((await app.request('/v1/sessions/nope-1')).status).toBe(404)
  })

  it('validates Idempotency-Key', async () => {
    for (const key of ['', 'has space', 'x'.repeat(201), 'é']) {
      const res = await post(`/v1/sessions/${id}/turns`, '{}', { 'idempotency-key': key })
      expect(await rejection(res), key).toMatchObject({
        status: 400,
        field: 'header.idempotency-key',
      })
    }
    expect(
      (await post(`/v1/sessions/${id}/turns`, '{}', { 'idempotency-key': 'a.b:c-1_2' })).status,
    ).toBe(200)
  })

  it('validates query parameters: unknown, repeated, out of range', async () => {
    const cases: [string, string][] = [
      ['/v1/sessions?colour=1', 'query'],
      ['/v1/sessions?limit=0', 'query.limit'],
      ['/v1/sessions?limit=abc', 'query.limit'],
      ['/v1/sessions?limit=1&limit=2', 'query.limit'],
      ['/v1/sessions?status=done', 'query.status'],
      [`/v1/sessions/${id}/events?after=-2`, 'query.after'],
      [`/v1/sessions/${id}/events?after=1.5`, 'query.after'],
      [`/v1/sessions/${id}/events?follow=yes`, 'query.follow'],
      [`/v1/sessions/${id}/events?limit=5001`, 'query.limit'],
      [`/v1/sessions/${id}?x=1`, 'query.x'],
    ]
    for (const [path, field] of cases) {
      expect(await rejection(await app.request(path)), path).toMatchObject({ status: 400, field })
    }
    const r = await rejection(await post('/v1/sessions?dry_run=1', '{}'))
    expect(r).toMatchObject({ status: 400, field: 'query.dry_run' })
  })

  it('validates Last-Event-ID on SSE requests', async () => {
    const res = await app.request(`/v1/sessions/${id}/events`, {
      headers: { accept: 'text/event-stream', 'last-event-id': 'abc' },
    })
    expect(await rejection(res)).toMatchObject({ status: 400, field: 'header.last-event-id' })
  })
})
