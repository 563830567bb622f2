import { beforeAll, describe, expect, it } from 'vitest'
import { TurnlineApiError } from '../../client/errors.ts'
import { TurnlineClient } from '../../client/turnline-client.ts'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { SessionViewSchema } from '../../src/contract/session-view-response.ts'
import * as wire from '../../src/contract/wire-responses.ts'
import { SessionService } from '../../src/core/session-service.ts'

/**
 * An older client against a newer server: the answers of a real service (memory store, the
 * offline demo model), with what a later version might add to them — fields at any depth (the
 * session config's included), event types and error codes this version does not know. The
 * client reads them all; the documented schemas the readers derive from stay strict.
 */

type Json = Record<string, unknown>
type Rewrite = (path: string, status: number, body: Json) => Json

let app: ReturnType<typeof createApp>
let rewrite: Rewrite = (_path, _status, body) => body

beforeAll(async () => {
  const deps = await createDeps({}, { memoryStoreByDefault: true })
  app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    // The client below addresses the server by this name.
    allowedHosts: ['turnline.test'],
    log: () => {},
  })
})

/** The real server's answer, with the newer version's additions. */
async function newerServer(request: Request): Promise<Response> {
  const response = await app.fetch(request)
  const type = response.headers.get('content-type') ?? ''
  if (!type.startsWith('application/json')) return response
  const body = rewrite(new URL(request.url).pathname, response.status, await response.json())
  return new Response(JSON.stringify(body), { status: response.status, headers: response.headers })
}

const client = new TurnlineClient({ baseUrl: 'http://turnline.test', fetch: newerServer })

describe('the client reads a newer server', () => {
  it('a session view with config settings and fields it does not know', async () => {
    const { session_id } = await client.createSession({ workspace: 'newer' })
    rewrite = (path, _status, body) => {
      if (path !== `/v1/sessions/${session_id}`) return body
      const config = body.config as Json
      return {
        ...body,
        lineage: { parent: null },
        budget: { ...(body.budget as Json), steps: { used: 0, window: 'day' } },
        config: {
          ...config,
          new_setting: { enabled: true },
          harness: { ...(config.harness as Json), new_knob: 3 },
          model: { name: 'gpt-x', new_model_option: 'fast' },
        },
      }
    }
    const view = await client.getSession(session_id)
    expect(view.session_id).toBe(session_id)
    expect(view.config.workspace).toBe('newer')
    expect(view.config.model).toEqual({ name: 'gpt-x' })
    expect(view.budget.steps).toEqual({ used: 0 })
    expect(view).not.toHaveProperty('lineage')
    expect(view.config).not.toHaveProperty('new_setting')
    expect(view.config.harness).not.toHaveProperty('new_knob')
  })

  it('a turn with an event type it does not know, kept opaque in its place', async () => {
    const { session_id } = await client.createSession({ workspace: 'newer' })
    rewrite = (path, status, body) => {
      if (path !== `/v1/sessions/${session_id}/turns` || status !== 200) return body
      const events = body.events as Json[]
      return {
        ...body,
        events: [events[0], { type: 'turn.thinking', depth: 2 }, ...events.slice(1)],
        next_seq: (body.next_seq as number) + 1,
        trace_id: 'abc',
      }
    }
    const turn = await client.stepTurn(session_id, { input: 'Hello' })
    expect(turn.status).toBe('completed')
    expect(turn.events[1]).toMatchObject({ type: 'unknown', original_type: 'turn.thinking' })
    expect(turn.events.at(-1)?.type).toBe('turn.completed')
    expect(turn).not.toHaveProperty('trace_id')
  })

  it('an error code it does not know', async () => {
    rewrite = (_path, status, body) =>
      status === 404
        ? { error: { ...(body.error as Json), code: 'session_archived', hint: 'x' } }
        : body
    const error = await client.getSession('no-such-session').then(
      () => undefined,
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(TurnlineApiError)
    expect(error).toMatchObject({ status: 404, code: 'session_archived' })
  })
})

describe('the readers derived from the documented schemas', () => {
  const config = { workspace: 'w', new_setting: 1 }

  it('tolerate unknown fields where the documented schema (and request schema) refuses them', () => {
    expect(SessionViewSchema.shape.config.safeParse(config).success).toBe(false)
    expect(wire.SessionViewSchema.shape.config.parse(config)).not.toHaveProperty('new_setting')
  })

  it('still refuse a known field of the wrong type or value', () => {
    const reader = wire.SessionViewSchema.shape.config
    expect(reader.safeParse({ ...config, workspace: 'a..b' }).success).toBe(false)
    expect(reader.safeParse({ ...config, tools: 'none' }).success).toBe(false)
    expect(reader.safeParse({ ...config, model: { name: 'm', api: 'grpc' } }).success).toBe(false)
    expect(wire.TurnStatusSchema.safeParse('paused').success).toBe(false)
  })
})
