import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as z from 'zod'
import { createApp } from '../../functions/app.ts'
import {
  EventsQuerySchema,
  IntentRequestSchema,
  ListSessionsQuerySchema,
  TurnRequestSchema,
} from '../../src/contract/api.ts'
import { CompactRequestSchema } from '../../src/contract/compact-request.ts'
import {
  ResponseReadQuerySchema,
  ResponsesRequestSchema,
} from '../../src/contract/open-responses-request.ts'
import { PermissionResolutionRequestSchema } from '../../src/contract/permission-resolution.ts'
import { PlanApprovalRequestSchema } from '../../src/contract/plan-approval.ts'
import { ExecRequestSchema } from '../../src/contract/route-bodies.ts'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import { startEngine } from '../support/engine-harness.ts'
import {
  BAD_ACCEPTS,
  BAD_CONTENT_TYPES,
  BAD_IDEMPOTENCY_KEYS,
  pick,
  type Rng,
  randomBadId,
  randomBrokenBody,
  randomJson,
  randomQuery,
  rng,
} from '../support/fuzz-values.ts'

/**
 * Invariant 8: bad input of any shape gets a 4xx with a clear message, never a 5xx or a hung
 * request. The real engine (memory adapters, mock model) sits behind the app, so a value that
 * slipped past HTTP validation and broke the engine would show up as a 5xx here.
 */
const SEED = Number(process.env.TURNLINE_FUZZ_SEED ?? Date.now() % 1_000_000)
const PER_ROUTE = 300
const TIMEOUT_MS = 10_000
const KEY = 'fuzz-key-0123456789abcdef'

let engine: Awaited<ReturnType<typeof startEngine>>
let app: ReturnType<typeof createApp>
let sessionId = ''

beforeAll(async () => {
  engine = await startEngine()
  app = createApp({
    api: engine.service,
    auth: { keys: [{ key: KEY, tenant: 'fuzz' }] },
    limits: { maxBytes: 1024 * 1024, timeoutMs: 500 },
    log: () => {},
  })
  sessionId = (await engine.service.createSession('fuzz', {})).session_id
})
afterAll(async () => {
  engine.mock.assertDone()
  await engine.close()
})

interface Case {
  method: string
  path: string
  headers: Record<string, string>
  body?: string | Uint8Array
}

const auth = { authorization: `Bearer ${KEY}` }

/** A body that the schema rejects: random, broken, or valid-looking plus an unknown field. */
function badBody(r: Rng, schema: z.ZodType): string | Uint8Array {
  if (r() < 0.35) return randomBrokenBody(r)
  const text = JSON.stringify(randomJson(r))
  const value: unknown = JSON.parse(text)
  if (schema.safeParse(value).success) {
    return JSON.stringify({ ...(value as object), unknown_field: 1 })
  }
  return text
}

function badQuery(r: Rng, schema: z.ZodType): string {
  const query = randomQuery(r, Object.keys((schema as z.ZodObject).shape))
  const parsed = Object.fromEntries(new URLSearchParams(query))
  const repeated = new URLSearchParams(query).size !== Object.keys(parsed).length
  return repeated || !schema.safeParse(parsed).success ? query : `${query}&unknown_field=1`
}

/** Extra hostile headers that never make a bad request good (Accept, Authorization). */
function noise(r: Rng, headers: Record<string, string>): Record<string, string> {
  const out = { ...headers }
  if (r() < 0.3) out.accept = pick(r, BAD_ACCEPTS)
  if (r() < 0.1) out['last-event-id'] = pick(r, ['-1', 'x', '1e5', ''])
  return out
}

function jsonHeaders(r: Rng): Record<string, string> {
  return { ...auth, 'content-type': r() < 0.85 ? 'application/json' : pick(r, BAD_CONTENT_TYPES) }
}

const generators: Record<string, (r: Rng) => Case> = {
  'POST /v1/sessions': (r) => ({
    method: 'POST',
    path: '/v1/sessions',
    headers: noise(r, jsonHeaders(r)),
    body: badBody(r, SessionConfigSchema),
  }),
  'GET /v1/sessions': (r) => ({
    method: 'GET',
    path: `/v1/sessions?${badQuery(r, ListSessionsQuerySchema)}`,
    headers: noise(r, auth),
  }),
  'GET /v1/sessions/:id': (r) => ({
    method: 'GET',
    path: `/v1/sessions/${randomBadId(r)}`,
    headers: noise(r, auth),
  }),
  'POST /v1/sessions/:id/turns': (r) => {
    const roll = r()
    const id = roll < 0.3 ? randomBadId(r) : sessionId
    const headers = jsonHeaders(r)
    if (roll >= 0.3 && roll < 0.5) headers['idempotency-key'] = pick(r, BAD_IDEMPOTENCY_KEYS)
    return {
      method: 'POST',
      path: `/v1/sessions/${id}/turns`,
      headers: noise(r, headers),
      body: roll < 0.5 && r() < 0.5 ? '{}' : badBody(r, TurnRequestSchema),
    }
  },
  'GET /v1/sessions/:id/events': (r) => {
    const badId = r() < 0.4
    const sse = r() < 0.5
    const headers: Record<string, string> = { ...auth }
    if (sse) headers.accept = 'text/event-stream'
    let query = badQuery(r, EventsQuerySchema)
    if (badId) query = r() < 0.5 ? 'follow=1' : ''
    else if (sse && r() < 0.3) {
      headers['last-event-id'] = pick(r, ['-1', 'x', '1.5', '1e3', '9'.repeat(20)])
    }
    return {
      method: 'GET',
      path: `/v1/sessions/${badId ? randomBadId(r) : sessionId}/events?${query}`,
      headers,
    }
  },
  'POST /v1/sessions/:id/intents': (r) => bodyCase(r, 'intents', IntentRequestSchema),
  'POST /v1/sessions/:id/permissions': (r) =>
    bodyCase(r, 'permissions', PermissionResolutionRequestSchema),
  'POST /v1/sessions/:id/plan-approval': (r) =>
    bodyCase(r, 'plan-approval', PlanApprovalRequestSchema),
  'POST /v1/sessions/:id/fork': (r) =>
    bodyCase(r, 'fork', z.strictObject({ isolation: z.enum(['none', 'worktree']).optional() })),
  'POST /v1/sessions/:id/compact': (r) => bodyCase(r, 'compact', CompactRequestSchema),
  'POST /v1/responses': (r) => ({
    method: 'POST',
    path: '/v1/responses',
    headers: noise(r, jsonHeaders(r)),
    body: badBody(r, ResponsesRequestSchema),
  }),
  'GET /v1/responses/:id': (r) => {
    const badId = r() < 0.5
    return {
      method: 'GET',
      path: `/v1/responses/${badId ? randomBadId(r) : `resp_${sessionId}`}?${badQuery(r, ResponseReadQuerySchema)}`,
      headers: noise(r, r() < 0.5 ? { ...auth, accept: 'text/event-stream' } : auth),
    }
  },
  'POST /v1/runner/callback and /v1/webhooks/:name (not configured)': (r) => ({
    method: 'POST',
    path: pick(r, ['/v1/runner/callback', '/v1/webhooks/x', `/v1/webhooks/${randomBadId(r)}`]),
    headers: noise(r, r() < 0.5 ? jsonHeaders(r) : { 'content-type': 'application/json' }),
    body: randomBrokenBody(r),
  }),
  'POST /v1/sessions/:id/complete': (r) => endCase(r, 'complete'),
  'POST /v1/sessions/:id/cancel': (r) => endCase(r, 'cancel'),
  'POST /v1/exec': (r) => ({
    method: 'POST',
    path: '/v1/exec',
    headers: noise(r, jsonHeaders(r)),
    body: badBody(r, ExecRequestSchema),
  }),
  'any route, bad credentials': (r) => ({
    method: 'POST',
    path: pick(r, ['/v1/sessions', `/v1/sessions/${sessionId}`, '/v1/exec', '/v1/x']),
    headers: {
      'content-type': 'application/json',
      ...(r() < 0.2
        ? {}
        : {
            authorization: pick(r, [
              '',
              'Bearer',
              'Bearer ',
              `Bearer ${KEY} extra`,
              `Basic ${btoa(`u:${KEY}`)}`,
              `Bearer ${KEY.slice(0, -1)}`,
              `Bearer ${'k'.repeat(2000)}`,
              'Bearer é',
            ]),
          }),
    },
    body: '{}',
  }),
}

/** A session route with a body the schema rejects (or a bad id). */
function bodyCase(r: Rng, action: string, schema: z.ZodType): Case {
  const badId = r() < 0.3
  return {
    method: 'POST',
    path: `/v1/sessions/${badId ? randomBadId(r) : sessionId}/${action}`,
    headers: noise(r, jsonHeaders(r)),
    body: badBody(r, schema),
  }
}

function endCase(r: Rng, action: string): Case {
  const badId = r() < 0.4
  return {
    method: 'POST',
    path: `/v1/sessions/${badId ? randomBadId(r) : sessionId}/${action}`,
    headers: noise(r, jsonHeaders(r)),
    body: badId ? '{}' : badBody(r, TurnRequestSchema.pick({})),
  }
}

async function send(c: Case): Promise<number | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), TIMEOUT_MS)
  })
  try {
    const request = new Request(`http://turnline.test${c.path}`, {
      method: c.method,
      headers: c.headers,
      ...(c.body === undefined ? {} : { body: c.body as BodyInit }),
    })
    const response = await Promise.race([app.request(request), timeout])
    if (response === 'timeout') return response
    await Promise.race([response.text(), timeout])
    return response.status
  } finally {
    clearTimeout(timer)
  }
}

describe(`HTTP fuzz (seed ${SEED}; rerun with TURNLINE_FUZZ_SEED=${SEED})`, () => {
  for (const [route, generate] of Object.entries(generators)) {
    it(`${route}: ${PER_ROUTE} malformed requests all get a 4xx`, async () => {
      const r = rng(SEED ^ route.length)
      const failures: string[] = []
      for (let i = 0; i < PER_ROUTE; i++) {
        const c = generate(r)
        const status = await send(c)
        if (status === 'timeout' || status < 400 || status >= 500) {
          const body = typeof c.body === 'string' ? c.body.slice(0, 200) : c.body
          failures.push(
            `${status} ${c.method} ${c.path.slice(0, 200)} ${JSON.stringify(c.headers).slice(0, 300)} ${String(body)}`,
          )
        }
      }
      expect(failures).toEqual([])
      expect(engine.mock.requests).toEqual([])
    })
  }
})
