import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { collect, jsonLines, runCli, spawnCli } from '../support/cli-process.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { freePort } from '../support/runtime-process.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'

/**
 * The real `turnline` binary against running servers (`npm start`'s entry as a child process):
 * one with the mock OpenAI model behind the real OpenAI adapter, one multi-tenant, one with the
 * offline demo model.
 */
type Event = Record<string, unknown> & { type: string; item?: Record<string, unknown> }
const events = (stdout: string) => jsonLines(stdout) as Event[]

let dir = ''
let mock: MockOpenAI
let server: ServerProcess

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-cli-server-'))
  // The command sandbox's user must get through to the workspaces (mkdtemp makes it 0700).
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  server = await startServerProcess({
    TURNLINE_DATA_DIR: join(dir, 'mock-model'),
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
  })
}, 60_000)
afterEach(() => {
  try {
    mock.assertDone()
  } finally {
    mock.reset()
  }
})
afterAll(async () => {
  await server?.stop()
  await mock?.close()
  await rm(dir, { recursive: true, force: true })
})

const exec = (args: string[]) => runCli(['exec', '--url', server.url, ...args], { cwd: dir })

describe('turnline exec --url, server with the mock OpenAI model', { timeout: 180_000 }, () => {
  it('runs a turn on the server and prints its events; --model picks the model', async () => {
    mock.enqueue({ text: 'Hello from the mock.', usage: { input_tokens: 20, output_tokens: 5 } })
    const run = await exec(['--json', 'Say hello'])
    expect(run.code, run.stderr).toBe(0)
    const all = events(run.stdout)
    expect(all.map((e) => e.type)).toEqual([
      'thread.started',
      'turn.started',
      'item.started',
      'item.completed',
      'turn.completed',
      'thread.completed',
    ])
    expect(all.at(-1)).toMatchObject({ subtype: 'success', result: 'Hello from the mock.' })
    expect(mock.requests[0]?.body.model).toBe('gpt-4o-mini')
    expect(JSON.stringify(mock.requests[0]?.body.messages)).toContain('Say hello')
    // The server is the only one told about it: the CLI printed no demo notice.
    expect(run.stderr).toBe('')

    mock.enqueue({ text: 'Other model.' })
    const other = await exec(['--model', 'gpt-4.1-mini', 'Who are you?'])
    expect(other.code, other.stderr).toBe(0)
    expect(other.stdout).toBe('Other model.\n')
    expect(mock.requests[1]?.body.model).toBe('gpt-4.1-mini')
    expect(other.stderr).toMatch(/turnline exec · session \S+ · server http:\/\/127\.0\.0\.1:\d+/)
  })

  it('runs the tool calls the model makes in the server sandbox', async () => {
    mock.enqueue(
      {
        toolCalls: [{ id: 'call_1', name: 'exec_command', arguments: '{"cmd":"echo via-server"}' }],
      },
      { text: 'The command printed via-server.' },
    )
    const run = await exec(['Run echo'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(
      /^✓ exec_command echo via-server · exit 0 · \d+\.\ds\n {2}│ via-server$/m,
    )
    expect(run.stdout).toBe('The command printed via-server.\n')
    const messages = (mock.requests[1]?.body.messages ?? []) as { role: string; content: string }[]
    const toolMessage = messages.find((m) => m.role === 'tool')
    expect(toolMessage?.content).toContain('via-server')
  })

  it('exits 4 on the budget, 1 when the model fails', async () => {
    mock.enqueue({ text: 'Expensive.', usage: { input_tokens: 1_000_000, output_tokens: 10 } })
    const budget = await exec(['--json', '--max-budget-usd', '0.01', 'Be expensive'])
    expect(budget.code, budget.stderr).toBe(4)
    expect(events(budget.stdout).at(-1)).toMatchObject({
      type: 'thread.completed',
      subtype: 'error_max_budget_usd',
      outcome_code: 'budget_limit_reached',
    })

    mock.enqueue({ status: 400, code: 'invalid_request_error', message: 'bad request body' })
    const failed = await exec(['Fail please'])
    expect(failed.code).toBe(1)
    expect(failed.stderr).toMatch(/^turn failed: .*bad request body/m)
    expect(failed.stderr).toMatch(/^✗ error_during_execution \(failed\)/m)
  })

  it('sends --output-schema as strict structured output and checks the answer', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { type: 'integer' } },
      required: ['answer'],
      additionalProperties: false,
    }
    const file = join(dir, 'schema.json')
    await writeFile(file, JSON.stringify(schema))
    mock.enqueue({ text: '{"answer":42}' })
    const ok = await exec(['--output-schema', file, 'What is six times seven?'])
    expect(ok.code, ok.stderr).toBe(0)
    expect(ok.stdout).toBe('{"answer":42}\n')
    expect(mock.requests[0]?.body.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'turnline_output', schema, strict: true },
    })
    mock.enqueue({ text: 'forty-two' })
    const off = await exec(['--output-schema', file, 'Again?'])
    expect(off.code).toBe(6)
    expect(off.stderr).toMatch(/the final answer is not JSON/)
  })

  it('follows a session with `events --follow` until it completes', async () => {
    mock.enqueue({ text: 'First answer.' })
    const first = await exec(['--json', '--keep-open', 'First'])
    expect(first.code, first.stderr).toBe(0)
    const sid = String(events(first.stdout)[0]?.thread_id)
    const follower = spawnCli(['events', sid, '--follow', '--json', '--url', server.url], {
      cwd: dir,
    })
    const followed = collect(follower, { timeoutMs: 60_000 })
    mock.enqueue({ text: 'Second answer.' })
    const second = await exec(['resume', sid, 'Second'])
    expect(second.code, second.stderr).toBe(0)
    const seen = await followed
    expect(seen.code, seen.stderr).toBe(0)
    const all = events(seen.stdout)
    expect(all[0]?.type).toBe('thread.started')
    expect(all.at(-1)).toMatchObject({ type: 'thread.completed', result: 'Second answer.' })
  })

  it('exits 7 when the server cannot be reached', async () => {
    const port = await freePort()
    const run = await runCli(['exec', '--url', `http://127.0.0.1:${port}`, 'hi'], { cwd: dir })
    expect(run.code).toBe(7)
    expect(run.stderr).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+/)
  })

  it('refuses a --url that holds a password, without printing it', async () => {
    const port = await freePort()
    const url = `http://user:s3cret-pass@127.0.0.1:${port}`
    for (const args of [
      ['sessions', '--url', url],
      ['exec', '--url', url, 'hi'],
    ]) {
      const run = await runCli(args, { cwd: dir })
      expect(run.code, run.stderr).toBe(2)
      expect(run.stderr).toMatch(/--url must not hold a user or password/)
      expect(run.stdout + run.stderr).not.toContain('s3cret-pass')
    }
  })
})

describe('turnline against other servers', { timeout: 180_000 }, () => {
  it('uses --api-key on a multi-tenant server (whose turns need a model: no demo model there)', async () => {
    const keyed = await startServerProcess({
      TURNLINE_DATA_DIR: join(dir, 'keyed'),
      TURNLINE_API_KEYS: 'cli-test-key-0123456789=acme',
    })
    try {
      const refused = await runCli(['sessions', '--url', keyed.url], { cwd: dir })
      expect(refused.code).toBe(7)
      expect(refused.stderr).toMatch(/answered 401 unauthorized/)
      expect(refused.stderr).toMatch(/--api-key KEY or the environment variable TURNLINE_API_KEY/)
      const run = await runCli(
        ['exec', '--url', keyed.url, '--api-key', 'cli-test-key-0123456789', 'hi'],
        { cwd: dir },
      )
      expect(run.code).toBe(1)
      expect(run.stderr).toMatch(/turn failed: No model is configured/)
      const listed = await runCli(['sessions', '--url', keyed.url], {
        cwd: dir,
        env: { TURNLINE_API_KEY: 'cli-test-key-0123456789' },
      })
      expect(listed.code, listed.stderr).toBe(0)
      expect(listed.stdout).toMatch(
        /^SESSION\s+STATUS\s+TURNS\s+EVENTS\s+LAST ACTIVITY\s+TITLE\nsession-\S+\s+completed\s+1\s+/,
      )
    } finally {
      await keyed.stop()
    }
  })

  it('deletes a session: gone from the list, a second delete is refused as unknown', async () => {
    const server = await startServerProcess({ TURNLINE_DATA_DIR: join(dir, 'delete') })
    try {
      const url = ['--url', server.url]
      const run = await runCli(['exec', ...url, '--json', 'hello'], { cwd: dir })
      expect(run.code, run.stderr).toBe(0)
      const id = String((jsonLines(run.stdout)[0] as { thread_id?: string } | undefined)?.thread_id)
      const listed = (await runCli(['sessions', ...url], { cwd: dir })).stdout
      expect(listed).toMatch(/^SESSION\s+STATUS\s+TURNS\s+EVENTS\s+LAST ACTIVITY\s+TITLE\n/)
      // the session's title is its first prompt
      expect(listed).toMatch(new RegExp(`${id}\\s+completed\\s+1\\s+\\d+\\s+\\S+\\s+hello\\n`))
      const deleted = await runCli(['delete', id, ...url], { cwd: dir })
      expect(deleted.code, deleted.stderr).toBe(0)
      expect(deleted.stderr).toBe(`deleted ${id}\n`)
      expect((await runCli(['sessions', ...url], { cwd: dir })).stdout).not.toContain(id)
      const again = await runCli(['delete', id, ...url], { cwd: dir })
      expect(again.code).toBe(7)
      expect(again.stderr).toMatch(/404 not_found/)
      expect((await runCli(['delete', ...url], { cwd: dir })).code).toBe(2)
    } finally {
      await server.stop()
    }
  })

  it('runs the loop against a server on the offline demo model', async () => {
    const demo = await startServerProcess({ TURNLINE_DATA_DIR: join(dir, 'demo') })
    try {
      expect(demo.output()).toMatch(/OFFLINE DEMO MODEL/)
      const run = await runCli(['exec', '--url', demo.url, '--json', 'run `echo hi-demo`'], {
        cwd: dir,
      })
      expect(run.code, run.stderr).toBe(0)
      const all = events(run.stdout)
      const output = all.find((e) => e.type === 'item.completed' && e.item?.type === 'tool_output')
      expect(String(output?.item?.output)).toContain('hi-demo')
      expect(String(all.at(-1)?.result)).toMatch(/^\[offline demo model\] Done\./)
    } finally {
      await demo.stop()
    }
  })
})
