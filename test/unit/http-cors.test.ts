import { describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { parseEnv } from '../../functions/env-config.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'

/**
 * CORS (TURNLINE_CORS_ORIGINS) and method answers: preflights before authentication, the grant
 * only for listed origins, on errors too; 405 with Allow for a known path; and without keys a
 * listed origin is the only cross-site Origin let through, never a foreign Host.
 */
const KEY = 'k'.repeat(24)
const APP_ORIGIN = 'https://app.example.com'

function keyed(corsOrigins?: readonly string[]) {
  return createApp({
    api: new FakeSessionApi(),
    auth: { keys: [{ key: KEY, tenant: 't1' }] },
    log: () => {},
    ...(corsOrigins ? { corsOrigins } : {}),
  })
}

const preflight = (origin: string, method = 'POST') => ({
  method: 'OPTIONS',
  headers: {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': 'authorization, content-type, idempotency-key',
  },
})

describe('CORS', () => {
  it('answers a listed origin its preflight before authentication', async () => {
    const app = keyed([APP_ORIGIN])
    const res = await app.request('/v1/sessions/s1/intents', preflight(APP_ORIGIN))
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
    expect(res.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS')
    const allowed = res.headers.get('access-control-allow-headers') ?? ''
    for (const name of ['authorization', 'content-type', 'idempotency-key', 'last-event-id']) {
      expect(allowed.split(', ')).toContain(name)
    }
    expect(res.headers.get('vary')).toContain('Origin')
  })

  it('grants nothing to an origin it does not list, nor when it lists none', async () => {
    for (const app of [keyed([APP_ORIGIN]), keyed()]) {
      const res = await app.request('/v1/sessions', preflight('https://evil.example'))
      expect(res.status).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
      expect(res.headers.get('allow')).toBe('POST, GET, HEAD, OPTIONS')
      const real = await app.request('/v1/sessions', {
        headers: { origin: 'https://evil.example', authorization: `Bearer ${KEY}` },
      })
      expect(real.status).toBe(200)
      expect(real.headers.get('access-control-allow-origin')).toBeNull()
    }
    // `null` (a sandboxed frame, a file) is no listed origin.
    const res = await keyed(['*']).request('/v1/sessions', preflight('null'))
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
  })

  it('exposes the headers a client reads, on answers and errors alike', async () => {
    const app = keyed([APP_ORIGIN])
    const ok = await app.request('/v1/sessions', {
      headers: { origin: APP_ORIGIN, authorization: `Bearer ${KEY}` },
    })
    expect(ok.status).toBe(200)
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
    const exposed = (ok.headers.get('access-control-expose-headers') ?? '').split(', ')
    for (const name of [
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'retry-after',
    ]) {
      expect(exposed).toContain(name)
    }
    const denied = await app.request('/v1/sessions', { headers: { origin: APP_ORIGIN } })
    expect(denied.status).toBe(401)
    expect(denied.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
  })

  it('allows every origin with *, each answered with its own origin', async () => {
    const res = await keyed(['*']).request('/v1/sessions', preflight('https://any.example:8443'))
    expect(res.headers.get('access-control-allow-origin')).toBe('https://any.example:8443')
  })
})

describe('methods', () => {
  it('answers 405 with Allow for a known path and a wrong method, 404 for an unknown path', async () => {
    const app = keyed()
    const auth = { authorization: `Bearer ${KEY}` }
    const wrong = await app.request('/v1/sessions/s1/intents', { method: 'GET', headers: auth })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('POST, OPTIONS')
    expect(await wrong.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
    const put = await app.request('/v1/sessions/s1', { method: 'PUT', headers: auth })
    expect(put.status).toBe(405)
    expect(put.headers.get('allow')).toContain('GET')
    const unauthenticated = await app.request('/v1/sessions/s1/intents', { method: 'GET' })
    expect(unauthenticated.status).toBe(401)
    const healthPost = await app.request('/healthz', { method: 'POST' })
    expect(healthPost.status).toBe(405)
    expect(healthPost.headers.get('allow')).toBe('GET, HEAD, OPTIONS')
    const unknown = await app.request('/v1/nothing', { method: 'GET', headers: auth })
    expect(unknown.status).toBe(404)
    const options = await app.request('/v1/nothing', { method: 'OPTIONS', headers: auth })
    expect(options.status).toBe(404)
  })
})

describe('without keys', () => {
  const keyless = (corsOrigins: readonly string[]) =>
    createApp({ api: new FakeSessionApi(), auth: { keys: [] }, log: () => {}, corsOrigins })
  const host = { host: '127.0.0.1:8787' }

  it('lets a listed origin through the Origin check, and no other site', async () => {
    const app = keyless([APP_ORIGIN])
    const listed = await app.request('http://127.0.0.1:8787/v1/sessions', {
      headers: { ...host, origin: APP_ORIGIN },
    })
    expect(listed.status).toBe(200)
    expect(listed.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN)
    const pre = await app.request('http://127.0.0.1:8787/v1/sessions', preflight(APP_ORIGIN))
    expect(pre.status).toBe(204)
    for (const origin of ['https://evil.example', 'http://app.example.com', 'null']) {
      const res = await app.request('http://127.0.0.1:8787/v1/sessions', {
        method: 'POST',
        headers: { ...host, origin, 'content-type': 'application/json' },
        body: '{}',
      })
      expect({ origin, status: res.status }).toEqual({ origin, status: 403 })
    }
  })

  it('still refuses a foreign Host, even from a listed origin (DNS rebinding)', async () => {
    const app = keyless([APP_ORIGIN])
    for (const init of [
      { headers: { host: 'app.example.com', origin: APP_ORIGIN } },
      {
        ...preflight(APP_ORIGIN),
        headers: { ...preflight(APP_ORIGIN).headers, host: 'evil.example' },
      },
    ]) {
      const res = await app.request('http://app.example.com/v1/sessions', init)
      expect(res.status).toBe(403)
      expect(res.headers.get('access-control-allow-origin')).toBeNull()
    }
  })

  it('never lets * stand for every site', async () => {
    const app = keyless(['*'])
    const res = await app.request('http://127.0.0.1:8787/v1/sessions', {
      headers: { ...host, origin: 'https://evil.example' },
    })
    expect(res.status).toBe(403)
    expect(() => parseEnv({ TURNLINE_CORS_ORIGINS: '*' })).toThrow(/TURNLINE_CORS_ORIGINS/)
  })
})

describe('TURNLINE_CORS_ORIGINS', () => {
  it('normalizes origins as browsers send them and refuses anything else', () => {
    const env = { TURNLINE_API_KEYS: `${KEY}=t1` }
    const config = parseEnv({
      ...env,
      TURNLINE_CORS_ORIGINS: 'https://App.Example.com:443, http://localhost:5173',
    })
    expect(config.TURNLINE_CORS_ORIGINS).toEqual([APP_ORIGIN, 'http://localhost:5173'])
    for (const bad of [
      'app.example.com',
      'https://app.example.com/',
      'ftp://x.example',
      'https://u@x.example',
    ]) {
      expect(() => parseEnv({ ...env, TURNLINE_CORS_ORIGINS: bad })).toThrow(/not an origin/)
    }
    expect(parseEnv(env).TURNLINE_CORS_ORIGINS).toBeUndefined()
  })
})
