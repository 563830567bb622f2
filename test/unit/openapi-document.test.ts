import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import openapiTS, { astToString } from 'openapi-typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { fullApp } from '../support/openapi-app.ts'
import { undescribedFields } from '../support/openapi-fields.ts'

const root = new URL('../../', import.meta.url).pathname
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const

type Json = Record<string, unknown>
interface Operation {
  operationId?: string
  tags?: string[]
  summary?: string
  description?: string
  security?: unknown[]
  requestBody?: { content?: Record<string, { examples?: object; example?: unknown }> }
}

const app = fullApp()
let document: Json = {}
let dir = ''

beforeAll(async () => {
  const res = await app.request('/v1/openapi.json')
  expect(res.status).toBe(200)
  document = (await res.json()) as Json
  dir = await mkdtemp(join(tmpdir(), 'turnline-openapi-'))
})
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

function operations(): [string, string, Operation][] {
  const paths = document.paths as Record<string, Record<string, Operation>>
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map(
      (method) => [method, path, item[method] as Operation] as [string, string, Operation],
    ),
  )
}

describe('the OpenAPI document', () => {
  it('is valid for swagger-parser (schema and every $ref)', async () => {
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy()
  })

  it('has no errors under redocly lint (recommended rules)', async () => {
    const file = join(dir, 'openapi.json')
    await writeFile(file, JSON.stringify(document))
    const run = await promisify(execFile)(
      join(root, 'node_modules/.bin/redocly'),
      ['lint', file, '--format=json', '--config', join(root, 'redocly.yaml')],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          REDOCLY_TELEMETRY: 'off',
          REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
        },
      },
    ).catch((error: { stdout?: string; stderr?: string }) => error)
    const report = JSON.parse(run.stdout ?? '{}') as {
      totals?: { errors: number; warnings: number }
      problems?: {
        ruleId: string
        severity: string
        message: string
        location: { pointer: string }[]
      }[]
    }
    expect(report.totals, run.stderr).toBeDefined()
    // Errors fail, and so does an example that does not match its schema (a warning there).
    const errors = (report.problems ?? [])
      .filter(
        (problem) =>
          problem.severity === 'error' || problem.ruleId === 'no-invalid-media-type-examples',
      )
      .map((problem) => `${problem.ruleId} ${problem.location[0]?.pointer}: ${problem.message}`)
    expect(errors).toEqual([])
  })

  it('generates TypeScript types with openapi-typescript', async () => {
    const ast = await openapiTS(structuredClone(document) as never)
    const types = astToString(ast)
    expect(types).toContain('createSession: {')
    expect(types).toContain('TurnResponse: {')
  })

  it('lists exactly the routes the app serves', () => {
    const served = new Set(
      app.routes
        .filter((route) => route.method !== 'ALL')
        .map((route) => `${route.method.toLowerCase()} ${route.path.replace(/:([^/]+)/g, '{$1}')}`),
    )
    const documented = new Set(operations().map(([method, path]) => `${method} ${path}`))
    // Redirects to a canonical path are served but not documented.
    const hidden = ['get /ui/']
    expect([...served].filter((route) => !documented.has(route))).toEqual(hidden)
    expect([...documented].filter((route) => !served.has(route))).toEqual([])
    expect(documented.size).toBeGreaterThan(30)
  })

  it('names, tags, summarizes and describes every operation, with unique ids', () => {
    const tags = new Set((document.tags as { name: string }[]).map((tag) => tag.name))
    const ids = new Set<string>()
    for (const [method, path, operation] of operations()) {
      const name = `${method} ${path}`
      expect(operation.operationId, name).toMatch(/^[a-z][A-Za-z]+$/)
      expect(ids.has(operation.operationId ?? ''), name).toBe(false)
      ids.add(operation.operationId ?? '')
      expect(operation.tags?.length, name).toBe(1)
      expect(tags.has(operation.tags?.[0] ?? ''), name).toBe(true)
      expect(operation.summary, name).toBeTruthy()
      expect(operation.description, name).toBeTruthy()
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        expect(Object.keys(media.examples ?? {}).length, `${name} ${type}`).toBeGreaterThan(0)
      }
    }
  })

  it('has servers, the bearer scheme, and marks the public routes', () => {
    expect((document.servers as object[]).length).toBeGreaterThan(0)
    expect(document).toHaveProperty(
      'components.securitySchemes.bearer',
      expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    )
    expect(document.security).toEqual([{ bearer: [] }])
    const open = operations()
      .filter(
        ([, , operation]) => Array.isArray(operation.security) && operation.security.length === 0,
      )
      .map(([method, path]) => `${method} ${path}`)
      .sort()
    expect(open).toEqual([
      'get /',
      'get /docs',
      'get /docs/init.js',
      'get /docs/scalar.js',
      'get /healthz',
      'get /ui',
      'get /ui/viewer.css',
      'get /ui/viewer.js',
      'get /v1/openapi.json',
      'post /v1/runner/callback',
      'post /v1/webhooks/{name}',
    ])
  })
})

describe('the schemas of the document', () => {
  it('describe every field and parameter (the zod schemas of src/contract carry them)', () => {
    expect(undescribedFields(document)).toEqual([])
    const bare = operations().flatMap(([method, path, operation]) =>
      ((operation as { parameters?: { name: string; description?: string }[] }).parameters ?? [])
        .filter((parameter) => !parameter.description)
        .map((parameter) => `${method} ${path} ${parameter.name}`),
    )
    expect(bare).toEqual([])
  })

  it('name their shared parts once (components), with no anonymous recursion', () => {
    const schemas = Object.keys((document.components as { schemas: object }).schemas)
    expect(schemas).toEqual(
      expect.arrayContaining(['ThreadEvent', 'ThreadItem', 'JsonValue', 'Error']),
    )
    expect(schemas.filter((name) => name.startsWith('__'))).toEqual([])
  })
})

describe('the public routes need no key, the others do', () => {
  it('answers 401 without a key on a bearer route and 200 on a public one', async () => {
    const { createApp } = await import('../../functions/app.ts')
    const { FakeSessionApi } = await import('../support/fake-session-api.ts')
    const keyed = createApp({
      api: new FakeSessionApi(),
      auth: { keys: [{ key: 'k'.repeat(20), tenant: 't' }] },
    })
    expect((await keyed.request('/v1/openapi.json')).status).toBe(200)
    expect((await keyed.request('/docs')).status).toBe(200)
    expect((await keyed.request('/v1/sessions')).status).toBe(401)
  })
})
