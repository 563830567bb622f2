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

/** Waits for the entry's "listening on" line: up to a minute on a loaded machine, or its exit. */
async function listening(started: Started): Promise<string> {
  let exited = false
  void started.exited.then(() => {
    exited = true
  })
  const deadline = Date.now() + 60_000
  while (!exited && Date.now() < deadline) {
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
    const started = start({ PORT: '0', TURNLINE_DATA_DIR: join(dir, 'data') })
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
      // No model configured: the offline demo model answers, labelled as such.
      const body = (await turn.json()) as {
        status: string
        events: { type: string; item?: { type: string; text?: string } }[]
      }
      expect(body.status).toBe('completed')
      const answer = body.events.findLast((e) => e.item?.type === 'agent_message')
      expect(answer?.item?.text).toMatch(/^\[offline demo model\] /)
      expect(started.output()).toMatch(/single-tenant mode/)
      expect(started.output()).toMatch(/model: turnline-demo, the built-in OFFLINE DEMO MODEL/)
      // Operator signals: the start line, one line per request and per turn (JSON on stdout).
      const lines = started
        .output()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>)
      expect(lines.find((l) => l.msg === 'start')).toMatchObject({
        model_provider: 'demo',
        model: 'turnline-demo',
        base_url: null,
        url,
      })
      expect(lines.find((l) => l.msg === 'turn')).toMatchObject({
        op: 'turn',
        tenant: 'local',
        turn: 'turn-1',
        status: 'completed',
        model_calls: 1,
      })
      expect(
        lines.filter((l) => l.msg === 'request').map((l) => [l.method, l.route, l.status]),
      ).toEqual([
        ['GET', '/healthz', 200],
        ['POST', '/v1/sessions', 201],
        ['POST', '/v1/sessions/:id/turns', 200],
      ])
      started.child.kill('SIGTERM')
      expect(await started.exited).toBe(0)
    } finally {
      started.child.kill('SIGKILL')
    }
  }, 120_000)

  it('refuses a non-loopback HOST without API keys, naming the variable', async () => {
    const started = start({ HOST: '0.0.0.0', PORT: '0', TURNLINE_DATA_DIR: join(dir, 'data') })
    expect(await started.exited).toBe(1)
    expect(started.output()).toMatch(/HOST: 0\.0\.0\.0 is not a loopback address/)
    expect(started.output()).not.toMatch(/listening/)
  })

  it('reports a bad variable at startup', async () => {
    const started = start({
      TURNLINE_MODEL_API: 'completions',
      TURNLINE_DATA_DIR: join(dir, 'data'),
    })
    expect(await started.exited).toBe(1)
    expect(started.output()).toMatch(/TURNLINE_MODEL_API/)
  })
})
