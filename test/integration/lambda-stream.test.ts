import { spawnSync } from 'node:child_process'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SessionStore } from '../../src/store/session-store.ts'
import {
  installLambdaGlobals,
  invokeStreaming,
  isStreamingHandler,
  type StreamingHandler,
  urlEvent,
} from '../support/lambda-runtime.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { threadCompleted, threadStarted } from '../support/sample-events.ts'
import { parseSse } from '../support/sse-frames.ts'
import { startTestBackends, type TestBackends } from '../support/test-deployment.ts'

/**
 * The Lambda bundle exactly as deployed: `npm run build:lambda` into a temp folder, its
 * `index.handler` loaded with the runtime's `awslambda` globals and invoked with function-URL
 * events (payload 2.0) on S3 (moto) and Upstash (REST proxy → redis-server). An SSE turn must
 * reach the Runtime API event by event while the model is still answering.
 */
const root = new URL('../../', import.meta.url).pathname
const KEY = 'lambda-key-0123456789'

let out = ''
let backends: TestBackends
let bucket: TestBackends['bucket']
let mock: MockOpenAI
let handler: StreamingHandler
let retention: () => Promise<{ deleted: { sessions: string[] }[] }>

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'turnline-lambda-'))
  const built = spawnSync(process.execPath, ['infra/build/build.mjs', 'lambda', '--out', out], {
    cwd: root,
    encoding: 'utf8',
  })
  if (built.status !== 0)
    throw new Error(`the Lambda build failed:\n${built.stdout}${built.stderr}`)
  backends = await startTestBackends('lambda')
  ;({ bucket, mock } = backends)

  // The function's configuration, read once when the runtime loads the module.
  const saved = { ...process.env }
  Object.assign(
    process.env,
    backends.env({
      TURNLINE_API_KEYS: `${KEY}=tenant-l`,
      TURNLINE_TOOL_SECRET: 'lambda-tool-secret-0123',
    }),
  )
  try {
    installLambdaGlobals()
    const loaded = (await import(pathToFileURL(join(out, 'lambda/index.mjs')).href)) as {
      handler: unknown
      retention: typeof retention
    }
    retention = loaded.retention
    if (!isStreamingHandler(loaded.handler)) {
      throw new Error('index.handler is not wrapped with awslambda.streamifyResponse')
    }
    handler = loaded.handler
  } finally {
    process.env = saved
  }
}, 120_000)

afterAll(async () => {
  await backends?.close()
  if (out) await rm(out, { recursive: true, force: true })
})

const auth = { authorization: `Bearer ${KEY}` }

describe('Lambda bundle (dist/lambda/index.mjs, streamHandle)', () => {
  it('answers plain requests through the streaming handler', async () => {
    const health = await invokeStreaming(handler, urlEvent('GET', '/healthz', {}))
    expect(health.contentType).toBe('application/vnd.awslambda.http-integration-response')
    expect(health.prelude.statusCode).toBe(200)
    expect(JSON.parse(health.body)).toEqual({ status: 'ok' })
    const denied = await invokeStreaming(handler, urlEvent('GET', '/v1/sessions', {}))
    expect(denied.prelude.statusCode).toBe(401)
    const listed = await invokeStreaming(handler, urlEvent('GET', '/v1/sessions', auth))
    expect(listed.prelude.statusCode).toBe(200)
    expect(JSON.parse(listed.body)).toEqual({ sessions: [] })
  })

  it('streams an SSE turn event by event while the model is still answering', async () => {
    const created = await invokeStreaming(
      handler,
      urlEvent('POST', '/v1/sessions', { ...auth, 'content-type': 'application/json' }, {}),
    )
    expect(created.prelude.statusCode).toBe(201)
    const { session_id: id } = JSON.parse(created.body) as { session_id: string }

    // 12 frames, 100 ms apart: the answer takes over a second to finish.
    mock.enqueue({
      text: 'Streaming from Lambda, frame by frame.',
      chunkSize: 4,
      frameDelayMs: 100,
    })
    const turn = await invokeStreaming(
      handler,
      urlEvent(
        'POST',
        `/v1/sessions/${id}/turns`,
        {
          ...auth,
          accept: 'text/event-stream',
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
        { input: 'Hello' },
      ),
    )
    expect(turn.prelude.statusCode, turn.body).toBe(200)
    mock.assertDone()
    expect(turn.prelude.headers['content-type']).toContain('text/event-stream')
    const frames = parseSse(turn.body).frames
    expect(frames.map((f) => f.event)).toContain('turn.started')
    expect(frames.at(-1)?.event).toBe('turn.result')
    const result = JSON.parse(frames.at(-1)?.data ?? '{}') as { status?: string }
    expect(result.status).toBe('completed')

    // Live, not buffered: turn.started reached the Runtime API long before the response ended,
    // and the body came in many chunks.
    const startedChunk = turn.chunks.find((c) => c.bytes.toString().includes('turn.started'))
    expect(startedChunk).toBeDefined()
    expect(turn.endedAt - (startedChunk?.at ?? turn.endedAt)).toBeGreaterThan(700)
    expect(turn.chunks.length).toBeGreaterThanOrEqual(3)
  })
})

describe('Lambda bundle: a followed feed and the function timeout', () => {
  it('ends the feed cleanly before the invocation runs out, not at TURNLINE_FOLLOW_MAX_SECONDS', async () => {
    const created = await invokeStreaming(
      handler,
      urlEvent('POST', '/v1/sessions', { ...auth, 'content-type': 'application/json' }, {}),
    )
    const { session_id: id } = JSON.parse(created.body) as { session_id: string }
    // An open session with no turn: the feed has nothing to end it but its time bound, which is
    // 300 s (the default) while the function has 8 s left; the feed keeps 5 s to end in.
    const feed = invokeStreaming(
      handler,
      urlEvent('GET', `/v1/sessions/${id}/events?follow=1`, {
        ...auth,
        accept: 'text/event-stream',
      }),
      8_000,
    )
    const cut = new Promise<'timed out'>((resolve) =>
      setTimeout(() => resolve('timed out'), 15_000),
    )
    const ended = await Promise.race([feed, cut])
    expect(ended, 'the feed outlived the function').not.toBe('timed out')
    if (ended === 'timed out') return
    expect(ended.prelude.statusCode).toBe(200)
    expect(parseSse(ended.body).frames.map((f) => f.event)).toEqual(['thread.started'])
    expect(ended.endedAt).toBeLessThan(8_000 - 2_000)
  }, 30_000)
})

describe('Lambda bundle: index.retention (EventBridge schedule)', () => {
  it('deletes closed sessions past 30 days across the bucket', async () => {
    const longAgo = Date.now() - 40 * 86_400_000
    const sessions = new SessionStore({ store: bucket.store(''), clock: { now: () => longAgo } })
    const ref = { tenant: 'tenant-l', workspace: 'old', sessionId: 'ancient-closed' }
    await sessions.create(ref, ref.sessionId, { events: [threadStarted(ref.sessionId)] })
    await sessions.commit(await sessions.open(ref), {
      events: [threadCompleted(ref.sessionId, 0)],
    })
    const result = await retention()
    expect(result.deleted.flatMap((d) => d.sessions)).toEqual(['ancient-closed'])
    expect(await sessions.keysOf(ref)).toEqual([])
  })
})

describe('Lambda bundle without keys', () => {
  it('fails its init naming the setting: a function URL never serves unauthenticated', async () => {
    const saved = { ...process.env }
    // The same bundle and backends, with neither TURNLINE_API_KEYS nor the key registry.
    Object.assign(process.env, backends.env({}))
    delete process.env.TURNLINE_API_KEYS
    delete process.env.TURNLINE_KEY_REGISTRY
    const errors: string[] = []
    const consoleError = console.error
    console.error = (...args: unknown[]) => errors.push(args.join(' '))
    try {
      // A new module instance (the query) of the handlers' chunk, which index.mjs imports at
      // init once it has set V8's flags (index.mjs itself would import the instance loaded above).
      const chunks = await readdir(join(out, 'lambda/chunks'))
      const handlers = chunks.find((name) => /^lambda-handlers-\w+\.mjs$/.test(name))
      expect(handlers).toBeDefined()
      const url = `${pathToFileURL(join(out, 'lambda/chunks', handlers as string)).href}?without-keys`
      await expect(import(url)).rejects.toThrow(/TURNLINE_API_KEYS: not set/)
    } finally {
      console.error = consoleError
      process.env = saved
    }
    expect(errors.join('\n')).toMatch(/TURNLINE_SINGLE_TENANT=1/)
  })

  it('fails its init on S3 without Upstash or REDIS_URL: every instance would keep its own leases', async () => {
    const saved = { ...process.env }
    Object.assign(process.env, backends.env({ TURNLINE_API_KEYS: `${KEY}=tenant-l` }))
    delete process.env.UPSTASH_REDIS_REST_URL
    delete process.env.UPSTASH_REDIS_REST_TOKEN
    delete process.env.REDIS_URL
    const consoleError = console.error
    console.error = () => {}
    try {
      const chunks = await readdir(join(out, 'lambda/chunks'))
      const handlers = chunks.find((name) => /^lambda-handlers-\w+\.mjs$/.test(name))
      const url = `${pathToFileURL(join(out, 'lambda/chunks', handlers as string)).href}?no-coordinator`
      await expect(import(url)).rejects.toThrow(
        'UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN, or REDIS_URL: required with S3_BUCKET here',
      )
    } finally {
      console.error = consoleError
      process.env = saved
    }
  })
})
