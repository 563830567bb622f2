import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Schema, Validator } from '@cfworker/json-schema'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { SessionService } from '../../src/core/session-service.ts'

/**
 * The answers of a real service (memory store, the offline demo model) match the response
 * schemas of its own OpenAPI document, with no field the document does not name: the response
 * schemas in src/contract/*-responses.ts describe what the service really sends.
 */

type Json = Record<string, unknown>
type Doc = { paths: Record<string, Record<string, Json>>; components: Json }

let app: ReturnType<typeof createApp>
let doc: Doc
let dir = ''

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-openapi-answers-'))
  const deps = await createDeps({}, { memoryStoreByDefault: true })
  app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    log: () => {},
  })
  doc = (await (await app.request('/v1/openapi.json')).json()) as Doc
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** The schema the document gives for this answer, with the components to resolve its refs. */
function answerSchema(method: string, path: string, status: number, type: string): Schema {
  const operation = doc.paths[path]?.[method] as
    | { responses: Record<string, { content?: Record<string, { schema: Json }> }> }
    | undefined
  const schema = operation?.responses[String(status)]?.content?.[type]?.schema
  if (!schema) throw new Error(`the document has no ${type} answer ${status} for ${method} ${path}`)
  return { ...schema, components: doc.components } as Schema
}

function conforms(value: unknown, schema: Schema, what: string): void {
  const result = new Validator(schema, '2020-12', false).validate(value)
  const errors = result.errors.map((e) => `${e.instanceLocation}: ${e.error}`).slice(0, 8)
  expect(errors, what).toEqual([])
}

async function call(
  method: string,
  template: string,
  values: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const url = template.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '')
  const res = await app.request(url, {
    method: method.toUpperCase(),
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  })
  const type = (res.headers.get('content-type') ?? '').split(';')[0] ?? ''
  if (type === 'application/x-ndjson') {
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown)
    const schema = answerSchema(method, template, res.status, type)
    for (const [i, line] of lines.entries())
      conforms(line, schema, `${method} ${template} line ${i}`)
    return { status: res.status, json: lines }
  }
  if (res.status === 204) return { status: 204, json: undefined }
  const json = (await res.json()) as unknown
  conforms(
    json,
    answerSchema(method, template, res.status, 'application/json'),
    `${method} ${template} ${res.status}`,
  )
  return { status: res.status, json }
}

describe('answers of a real service match the document', () => {
  it('sessions, turns, events, steering, artifacts, loops, exec and responses', async () => {
    const created = await call('post', '/v1/sessions', {}, { workspace: 'answers' })
    expect(created.status).toBe(201)
    const id = (created.json as { session_id: string }).session_id
    const v = { id, workspace: 'answers', kind: 'spec' }

    expect((await call('post', '/v1/sessions/{id}/turns', v, { input: 'Hello' })).status).toBe(200)
    expect((await call('get', '/v1/sessions/{id}', v)).status).toBe(200)
    expect((await call('get', '/v1/sessions', v)).status).toBe(200)
    expect((await call('get', '/v1/sessions/{id}/events', v)).status).toBe(200)
    expect((await call('get', '/v1/sessions/{id}/artifacts', v)).status).toBe(200)
    expect(
      (await call('post', '/v1/sessions/{id}/intents', v, { text: 'Also this.' })).status,
    ).toBe(202)
    expect((await call('get', '/v1/sessions/{id}/orientation', v)).status).toBe(200)
    expect((await call('post', '/v1/sessions/{id}/fork', v, {})).status).toBe(201)
    expect((await call('post', '/v1/sessions/{id}/handoff', v, {})).status).toBe(200)

    expect(
      (await call('put', '/v1/workspaces/{workspace}/artifacts/{kind}', v, { content: '# Spec' }))
        .status,
    ).toBe(200)
    expect((await call('get', '/v1/workspaces/{workspace}/artifacts/{kind}', v)).status).toBe(200)
    expect((await call('get', '/v1/workspaces/{workspace}/artifacts', v)).status).toBe(200)
    const notes = { ...v, kind: 'notes' }
    expect(
      (
        await call('post', '/v1/workspaces/{workspace}/artifacts/{kind}', notes, {
          text: 'A note.',
        })
      ).status,
    ).toBe(201)
    expect((await call('delete', '/v1/workspaces/{workspace}/artifacts/{kind}', v)).status).toBe(
      204,
    )

    const loop = await call('post', '/v1/loops', v, {
      task: 'Say hello.',
      session: { workspace: 'answers' },
    })
    expect(loop.status).toBe(201)
    const loopId = (loop.json as { loop_id: string }).loop_id
    expect((await call('get', '/v1/loops/{id}', { id: loopId })).status).toBe(200)
    const loopDeliveries = await call('get', '/v1/loops/{id}/deliveries', { id: loopId })
    expect(loopDeliveries).toEqual({ status: 200, json: { deliveries: [] } })
    expect((await call('get', '/v1/loops/{id}/deliveries', { id: 'no-such-loop' })).status).toBe(
      404,
    )
    expect(
      (await call('post', '/v1/loops/{id}/step', { id: loopId }, { control: 'pause' })).status,
    ).toBe(200)

    expect((await call('post', '/v1/sessions/{id}/complete', v, {})).status).toBe(200)
    expect((await call('post', '/v1/sessions/{id}/turns', v, { input: 'more' })).status).toBe(409)
    expect((await call('get', '/v1/sessions/{id}', { id: 'no-such-session' })).status).toBe(404)

    expect((await call('post', '/v1/exec', v, { prompt: 'Hello' })).status).toBe(200)
    const response = await call('post', '/v1/responses', v, { input: 'Hello' })
    expect(response.status).toBe(200)
    const responseId = (response.json as { id: string }).id
    expect((await call('get', '/v1/responses/{id}', { id: responseId })).status).toBe(200)
    expect((await call('get', '/healthz', v)).status).toBe(200)
    expect((await call('get', '/', v)).status).toBe(200)
  })
})
