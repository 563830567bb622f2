import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * Tenant B, with a valid key of its own, given every id tenant A has — session, response,
 * background response, loop, pending work of a session and of a loop, output artifact, workspace
 * name — on every route of the OpenAPI document that takes one in its path, and on the bodies
 * that name a response (`previous_response_id`): each answer is the one an id that exists
 * nowhere gets, status and text alike (the id aside), so B can neither read, change nor run
 * anything of A's, nor learn that it exists. Afterwards A's objects are as they were. On S3
 * (moto) and Upstash; a route with a path parameter that this table does not cover fails it.
 */
const KEY_A = 'isolation-key-tenant-a-0123456789'
const KEY_B = 'isolation-key-tenant-b-0123456789'
let backends: TestBackends
let server: RunningServer
let paramPaths: string[] = []

beforeAll(async () => {
  backends = await startTestBackends('isolation')
  const deps = await createDeps(
    backends.env({ TURNLINE_API_KEYS: `${KEY_A}=tenant-a,${KEY_B}=tenant-b`, TURNLINE_LOG: 'off' }),
  )
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    // Background work is recorded and stays pending: nothing runs it.
    background: { wake: () => {} },
    log: () => {},
  })
  server = await serveApp(app)
  const doc = (await (await app.request('/v1/openapi.json')).json()) as {
    paths: Record<string, Record<string, unknown>>
  }
  paramPaths = Object.entries(doc.paths).flatMap(([path, operations]) =>
    path.includes('{') ? Object.keys(operations).map((m) => `${m.toUpperCase()} ${path}`) : [],
  )
})
afterAll(async () => {
  await server?.close()
  await backends?.close()
})

async function call(key: string, method: string, path: string, body?: unknown, headers = {}) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, text: await res.text() }
}

async function made(key: string, method: string, path: string, body?: unknown, headers = {}) {
  const answer = await call(key, method, path, body, headers)
  expect(answer.status, `${method} ${path}: ${answer.text}`).toBeLessThan(300)
  return JSON.parse(answer.text) as Record<string, string>
}

type Ids = Record<'id' | 'response' | 'background' | 'loop' | 'work' | 'loop_work', string> &
  Record<'artifact_id' | 'workspace', string>

/** What B sends, for A's ids and for ids of the same shape that exist nowhere. */
function requests(ids: Ids): [string, string, unknown?][] {
  const session = `/v1/sessions/${ids.id}`
  return [
    ['GET', session],
    ['DELETE', session],
    ['GET', `${session}/turns`],
    ['POST', `${session}/turns`, { input: 'hello' }],
    ['GET', `${session}/events`],
    ['GET', `${session}/events?follow=1`],
    ['GET', `${session}/deliveries`],
    ['GET', `${session}/artifacts`],
    ['GET', `${session}/artifacts/${ids.artifact_id}`],
    ['POST', `${session}/complete`, {}],
    ['POST', `${session}/cancel`, {}],
    ['GET', `${session}/work/${ids.work}`],
    ['POST', `${session}/intents`, { text: 'steer' }],
    ['POST', `${session}/permissions`, { tool_name: 'read_file', decision: 'allow' }],
    ['POST', `${session}/plan-approval`, { decision: 'execute' }],
    ['POST', `${session}/fork`, {}],
    ['POST', `${session}/compact`, {}],
    ['GET', `${session}/orientation`],
    ['POST', `${session}/handoff`, { start: true }],
    ['POST', `${session}/verify`, {}],
    ['GET', `/v1/responses/${ids.response}`],
    ['GET', `/v1/responses/${ids.response}?stream=true`],
    ['GET', `/v1/responses/${ids.response}/input_items`],
    ['POST', `/v1/responses/${ids.background}/cancel`],
    ['DELETE', `/v1/responses/${ids.response}`],
    ['POST', '/v1/responses', { input: 'more', previous_response_id: ids.response }],
    ['POST', '/v1/responses/compact', { model: 'gpt-4o-mini', previous_response_id: ids.response }],
    ['GET', `/v1/loops/${ids.loop}`],
    ['GET', `/v1/loops/${ids.loop}/deliveries`],
    ['GET', `/v1/loops/${ids.loop}/work/${ids.loop_work}`],
    ['POST', `/v1/loops/${ids.loop}/step`, {}],
    ['POST', `/v1/loops/${ids.loop}/run`, {}],
    ['GET', `/v1/workspaces/${ids.workspace}/artifacts`],
    ['GET', `/v1/workspaces/${ids.workspace}/artifacts/spec`],
    ['PUT', `/v1/workspaces/${ids.workspace}/artifacts/spec`, { content: '# B' }],
    ['POST', `/v1/workspaces/${ids.workspace}/artifacts/notes`, { content: 'from B' }],
    ['DELETE', `/v1/workspaces/${ids.workspace}/artifacts/spec`],
    ['DELETE', `/v1/workspaces/${ids.workspace}`],
  ]
}

const nowhere: Ids = {
  id: 'session-20991231T000000Z-0123456789abcdef',
  response: 'resp_session-20991231T000000Z-fedcba9876543210',
  background: 'resp_resp-0123456789abcdef0123456789abcdef01234567',
  loop: 'loop-0123456789abcdef',
  work: '0123456789abcdef0123456789abcdef',
  loop_work: 'fedcba9876543210fedcba9876543210',
  artifact_id: 'out_0123456789abcdef0123456789abcdef',
  workspace: 'ws-nowhere',
}

/** The answer with each id replaced by its name, so two ids' answers compare. */
function masked(text: string, ids: Ids): string {
  let out = text
  for (const [name, value] of Object.entries(ids)) {
    out = out.replaceAll(value, `<${name}>`).replaceAll(value.replace(/^resp_/, ''), `<${name}>`)
  }
  return out.replace(/session-\d{8}T\d{6}Z-[0-9a-f]{16}/g, '<new session>')
}

describe('tenant isolation over every route', () => {
  it("answers another tenant's ids exactly as ids that exist nowhere, and changes nothing of A's", async () => {
    const mock = backends.mock
    mock.respond(() => ({ text: 'answered' }))
    const workspace = 'ws-shared-name'
    const id = (await made(KEY_A, 'POST', '/v1/sessions', { workspace })).session_id as string
    // An input over the inline limit is kept whole as an output artifact of the session.
    await made(KEY_A, 'POST', `/v1/sessions/${id}/turns`, { input: 'x'.repeat(80_000) })
    const turns = await made(KEY_A, 'GET', `/v1/sessions/${id}/turns`)
    const response = (await made(KEY_A, 'POST', '/v1/responses', { input: 'hi' })).id as string
    const background = (
      await made(KEY_A, 'POST', '/v1/responses', { input: 'later', background: true })
    ).id as string
    const loop = (await made(KEY_A, 'POST', '/v1/loops', { task: 'do', session: { workspace } }))
      .loop_id as string
    const loopWork = (
      await made(KEY_A, 'POST', `/v1/loops/${loop}/step`, {}, { prefer: 'respond-async' })
    ).work_id as string
    await made(KEY_A, 'PUT', `/v1/workspaces/${workspace}/artifacts/spec`, { content: '# A' })
    const waiting = (await made(KEY_A, 'POST', '/v1/sessions', { workspace })).session_id as string
    const work = (
      await made(
        KEY_A,
        'POST',
        `/v1/sessions/${waiting}/turns`,
        { input: 'queued' },
        {
          prefer: 'respond-async',
        },
      )
    ).work_id as string
    const artifactId = /out_[0-9a-f]{32}/.exec(JSON.stringify(turns))?.[0] as string
    expect(artifactId, JSON.stringify(turns).slice(0, 400)).toBeDefined()
    const a: Ids = {
      id,
      response,
      background,
      loop,
      work,
      loop_work: loopWork,
      artifact_id: artifactId,
      workspace,
    }
    // What A reads of its own objects, before B's calls and after them.
    const ownView = () =>
      Promise.all(
        [
          `/v1/sessions/${id}/events`,
          `/v1/sessions/${id}/artifacts/${artifactId}`,
          `/v1/responses/${response}`,
          `/v1/loops/${loop}`,
          `/v1/workspaces/${workspace}/artifacts/spec`,
          `/v1/sessions/${waiting}/work/${work}`,
          `/v1/sessions?workspace=${workspace}`,
        ].map((path) => call(KEY_A, 'GET', path)),
      )
    const before = await ownView()

    const asked = mock.requests.length
    const covered = new Set<string>()
    const theirs = requests(a)
    const none = requests(nowhere)
    for (const [i, [method, path, body]] of theirs.entries()) {
      const [, elsewhere, elsewhereBody] = none[i] as [string, string, unknown?]
      const other = await call(KEY_B, method, path, body)
      const missing = await call(KEY_B, method, elsewhere, elsewhereBody)
      expect(masked(other.text, a), `${method} ${path}`).toBe(masked(missing.text, nowhere))
      expect(other.status, `${method} ${path}`).toBe(missing.status)
      covered.add(`${method} ${templateOf(path, a)}`)
    }
    expect(mock.requests.length, 'no model call for B').toBe(asked)
    expect(paramPaths.filter((route) => !covered.has(route))).toEqual([])

    const after = await ownView()
    expect(after.map((answer) => answer.status)).toEqual(before.map(() => 200))
    expect(after.map((answer) => answer.text)).toEqual(before.map((answer) => answer.text))
  }, 120_000)
})

/** The document's path of a request: the ids named by their parameter. */
function templateOf(path: string, ids: Ids): string {
  const bare = path.split('?')[0] as string
  return bare
    .replace(`/${ids.artifact_id}`, '/{artifact_id}')
    .replace(`/work/${ids.work}`, '/work/{work_id}')
    .replace(`/work/${ids.loop_work}`, '/work/{work_id}')
    .replace(/\/artifacts\/(spec|notes)$/, '/artifacts/{kind}')
    .replace(`/workspaces/${ids.workspace}`, '/workspaces/{workspace}')
    .replace(
      new RegExp(`/(${[ids.id, ids.response, ids.background, ids.loop].join('|')})(?=/|$)`),
      '/{id}',
    )
}
