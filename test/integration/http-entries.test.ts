import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = new URL('../../', import.meta.url).pathname
const tsx = join(root, 'node_modules/.bin/tsx')

interface Started {
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
}

function start(env: Record<string, string>): Started {
  const child = spawn(tsx, ['functions/entries/node.ts'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  return { child, output: () => text, exited }
}

async function listening(started: Started): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const match = /listening on (http:\/\/\S+)/.exec(started.output())
    if (match?.[1]) return match[1]
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`the server did not start:\n${started.output()}`)
}

describe('Node entry (npm start)', () => {
  let dir = ''
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'turnline-node-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('serves the embedded default on loopback and shuts down on SIGTERM', async () => {
    const started = start({ PORT: '0', TURNLINE_DATA_DIR: dir })
    try {
      const url = await listening(started)
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' })
      const created = await fetch(`${url}/v1/sessions`, { method: 'POST' })
      expect(created.status).toBe(201)
      const turn = await fetch(
        `${url}/v1/sessions/${((await created.json()) as { session_id: string }).session_id}/turns`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"input":"hi"}',
        },
      )
      const body = (await turn.json()) as { status: string; events: { message?: string }[] }
      expect(body.status).toBe('failed')
      expect(body.events.at(-1)?.message).toMatch(/OPENAI_API_KEY/)
      expect(started.output()).toMatch(/single-tenant mode/)
      started.child.kill('SIGTERM')
      expect(await started.exited).toBe(0)
    } finally {
      started.child.kill('SIGKILL')
    }
  })

  it('refuses a non-loopback HOST without API keys, naming the variable', async () => {
    const started = start({ HOST: '0.0.0.0', PORT: '0', TURNLINE_DATA_DIR: dir })
    expect(await started.exited).toBe(1)
    expect(started.output()).toMatch(/HOST: 0\.0\.0\.0 is not a loopback address/)
    expect(started.output()).not.toMatch(/listening/)
  })

  it('reports a bad variable at startup', async () => {
    const started = start({ TURNLINE_MODEL_API: 'completions', TURNLINE_DATA_DIR: dir })
    expect(await started.exited).toBe(1)
    expect(started.output()).toMatch(/TURNLINE_MODEL_API/)
  })
})

describe('Lambda entry', () => {
  it('answers API Gateway events through the same app', async () => {
    const saved = { ...process.env }
    process.env.TURNLINE_STORE = 'memory'
    process.env.TURNLINE_API_KEYS = 'lambda-key-0123456789=tenant-l'
    let handler: (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>
    try {
      ;({ handler } = (await import('../../functions/entries/lambda.ts')) as unknown as {
        handler: typeof handler
      })
    } finally {
      process.env = saved
    }
    const event = (method: string, path: string, headers: Record<string, string> = {}) => ({
      version: '2.0',
      routeKey: '$default',
      rawPath: path,
      rawQueryString: '',
      headers: { host: 'example.lambda-url.us-east-1.on.aws', ...headers },
      requestContext: {
        http: { method, path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
        domainName: 'example.lambda-url.us-east-1.on.aws',
        requestId: 'r1',
        routeKey: '$default',
        stage: '$default',
        time: '',
        timeEpoch: 0,
        accountId: '1',
        apiId: 'a',
        domainPrefix: 'example',
      },
      isBase64Encoded: false,
    })
    const health = await handler(event('GET', '/healthz'), {})
    expect(health.statusCode).toBe(200)
    const denied = await handler(event('GET', '/v1/sessions'), {})
    expect(denied.statusCode).toBe(401)
    const listed = await handler(
      event('GET', '/v1/sessions', { authorization: 'Bearer lambda-key-0123456789' }),
      {},
    )
    expect(listed.statusCode).toBe(200)
    expect(JSON.parse(listed.body)).toEqual({ sessions: [] })
  })
})
