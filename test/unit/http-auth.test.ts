import { describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { createAuthenticator, parseApiKeys, tenantsOf } from '../../functions/http/auth.ts'
import { FakeSessionApi } from '../support/fake-session-api.ts'

const KEY_A = 'key-a-0123456789abcdef'
const KEY_B = 'key-b-0123456789abcdef'

function setup() {
  const api = new FakeSessionApi()
  const app = createApp({
    api,
    auth: {
      keys: [
        { key: KEY_A, tenant: 'tenant-a' },
        { key: KEY_B, tenant: 'tenant-b' },
      ],
    },
    log: () => {},
  })
  const as = (key: string | undefined, path: string, init: RequestInit = {}) =>
    app.request(path, {
      ...init,
      headers: {
        'content-type': 'application/json',
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...(init.headers as Record<string, string> | undefined),
      },
    })
  return { api, as }
}

describe('bearer auth', () => {
  it('rejects a missing, malformed or wrong key with 401 on every /v1 route', async () => {
    const { as, api } = setup()
    const routes: [string, string][] = [
      ['GET', '/v1/sessions'],
      ['POST', '/v1/sessions'],
      ['GET', '/v1/sessions/s1'],
      ['POST', '/v1/sessions/s1/turns'],
      ['GET', '/v1/sessions/s1/events'],
      ['POST', '/v1/sessions/s1/complete'],
      ['POST', '/v1/sessions/s1/cancel'],
      ['POST', '/v1/exec'],
      ['GET', '/v1/no-such-route'],
    ]
    for (const [method, path] of routes) {
      for (const header of [undefined, 'Basic abc', 'Bearer', `Bearer ${KEY_A}x`, 'Bearer short']) {
        const res = await as(undefined, path, {
          method,
          headers: header === undefined ? {} : { authorization: header },
        })
        expect(res.status, `${method} ${path} ${header}`).toBe(401)
        expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } })
      }
    }
    expect(api.calls).toEqual([])
  })

  it("scopes sessions by tenant: another tenant's key gets 404, never the session", async () => {
    const { as } = setup()
    const res = await as(KEY_A, '/v1/sessions', { method: 'POST', body: '{}' })
    const { session_id } = (await res.json()) as { session_id: string }
    expect((await as(KEY_A, `/v1/sessions/${session_id}`)).status).toBe(200)
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/events'],
      ['POST', '/turns'],
      ['POST', '/complete'],
      ['POST', '/cancel'],
    ]) {
      const other = await as(KEY_B, `/v1/sessions/${session_id}${suffix}`, { method })
      expect(other.status, `${method} ${suffix}`).toBe(404)
      expect(await other.json()).toMatchObject({ error: { code: 'not_found' } })
    }
    const listB = await as(KEY_B, '/v1/sessions')
    expect(await listB.json()).toEqual({ sessions: [] })
  })

  it('accepts the scheme case-insensitively', async () => {
    const { as } = setup()
    const res = await as(undefined, '/v1/sessions', {
      headers: { authorization: `bearer ${KEY_B}` },
    })
    expect(res.status).toBe(200)
  })

  it('runs single-tenant as tenant "local" when no keys are configured', async () => {
    const authenticate = createAuthenticator({ keys: [] })
    expect(await authenticate(undefined)).toBe('local')
    expect(await authenticate('Bearer whatever')).toBe('local')
    expect(tenantsOf({ keys: [] })).toEqual(['local'])
  })
})

describe('TURNLINE_API_KEYS parsing', () => {
  it('parses key=tenant pairs; a key may contain "="', () => {
    expect(parseApiKeys(`${KEY_A}=t1, ${KEY_B}==t2`)).toEqual([
      { key: KEY_A, tenant: 't1' },
      { key: `${KEY_B}=`, tenant: 't2' },
    ])
    expect(parseApiKeys('')).toEqual([])
    expect(parseApiKeys(' , ')).toEqual([])
  })

  it('explains what is wrong', () => {
    expect(parseApiKeys('nokey')).toMatch(/entry 1 is not key=tenant/)
    expect(parseApiKeys(`${KEY_A}=t1,short=t2`)).toMatch(/entry 2: the key is shorter than 16/)
    expect(parseApiKeys(`${KEY_A}=../x`)).toMatch(/tenant/)
    expect(parseApiKeys(`${KEY_A}=t1,${KEY_A}=t2`)).toMatch(/listed twice/)
    expect(parseApiKeys(`${KEY_A} x=t1`)).toMatch(/printable ASCII/)
  })
})
