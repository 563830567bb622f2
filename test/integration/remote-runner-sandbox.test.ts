import { existsSync } from 'node:fs'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { toolCall } from '../support/model-tool-call.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startRunnerProcess } from '../support/runner-process.ts'

/**
 * A server with several tenants never runs a command on a remote runner that is not sandboxed
 * (issue: it checked only its embedded runner). Real parts: the reference runner as a process
 * (TURNLINE_SANDBOX=off, or require with bubblewrap), `npm start`'s entry with
 * TURNLINE_RUNNER_URL, the mock OpenAI model asking for `exec_command`. A command that ran would
 * leave a marker file on the host; its absence proves none did.
 */
const SECRET = 'remote-sandbox-runner-secret-0123456789'
const KEY = 'remote-sandbox-key-0123456789abcdef'
let dir = ''
let mock: MockOpenAI
const started: { stop(): Promise<void> }[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-remote-sandbox-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
}, 60_000)

afterEach(async () => {
  for (const part of started.splice(0).reverse()) await part.stop()
  mock.reset()
})

afterAll(async () => {
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

async function runner(name: string, mode: 'off' | 'require', port?: number) {
  const process = await startRunnerProcess({
    root: join(dir, `runner-${name}`),
    secret: SECRET,
    env: { TURNLINE_SANDBOX: mode },
    ...(port !== undefined ? { port } : {}),
  })
  started.push(process)
  return process
}

function server(name: string, runnerUrl: string, multiTenant: boolean): NodeEntry {
  const entry = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, `data-${name}`),
    OPENAI_BASE_URL: mock.baseURL,
    OPENAI_API_KEY: 'sk-test',
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_RUNNER_URL: runnerUrl,
    TURNLINE_RUNNER_SECRET: SECRET,
    ...(multiTenant ? { TURNLINE_API_KEYS: `${KEY}=acme` } : {}),
  })
  started.push(entry)
  return entry
}

/** One turn whose model runs `cmd`; the tool message the model read back. */
async function commandTurn(url: string, cmd: string, id: string): Promise<string> {
  const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
  const created = await fetch(`${url}/v1/sessions`, { method: 'POST', headers, body: '{}' })
  expect(created.status).toBe(201)
  const { session_id } = (await created.json()) as { session_id: string }
  mock.enqueue({ toolCalls: [toolCall(id, 'exec_command', { cmd })] }, { text: 'done' })
  const turn = await fetch(`${url}/v1/sessions/${session_id}/turns`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ input: 'run it' }),
  })
  const body = await turn.text()
  expect(turn.status, body).toBe(200)
  const messages = (mock.requests.at(-1)?.body.messages ?? []) as {
    role: string
    content: string
  }[]
  const answer = messages.findLast((m) => m.role === 'tool')?.content
  if (answer === undefined) throw new Error(`no tool message after ${body}`)
  return answer
}

it('refuses to start with several tenants when the remote runner is reachable and unsandboxed', async () => {
  const off = await runner('refused', 'off')
  const entry = server('refused', off.url, true)
  const code = await entry.exited
  expect(code, entry.output()).not.toBe(0)
  expect(entry.output()).toMatch(/UNSANDBOXED/)
  expect(entry.output()).toMatch(/TURNLINE_SANDBOX=require/)
}, 90_000)

it('catches a runner restarted unsandboxed after the start before its next command', async () => {
  const sandboxed = await runner('restarted', 'require')
  const port = Number(new URL(sandboxed.url).port)
  const entry = server('restarted', sandboxed.url, true)
  const url = await entry.listening()
  const first = join(dir, 'marker-sandboxed')
  // Sandboxed, a command runs (in its workspace: the host's /tmp is not the sandbox's).
  expect(await commandTurn(url, 'echo sandboxed-ran', 'call_1')).toMatch(/sandboxed-ran/)
  expect(existsSync(first)).toBe(false)
  await sandboxed.stop()
  await runner('restarted-off', 'off', port)
  const marker = join(dir, 'marker-restarted')
  const answer = await commandTurn(url, `touch ${marker}`, 'call_2')
  expect(answer).toMatch(/UNSANDBOXED/)
  expect(answer).toMatch(/TURNLINE_SANDBOX=require/)
  // The refusal is the tenant's: it does not name the runner's address.
  expect(answer).not.toContain(`:${port}`)
  expect(existsSync(marker)).toBe(false)
}, 120_000)

it('checks a runner that was unreachable at start before the first command', async () => {
  // A port that nothing listens on yet: a runner started and stopped there.
  const placeholder = await runner('late-probe', 'require')
  const port = Number(new URL(placeholder.url).port)
  await placeholder.stop()
  started.length = 0
  const entry = server('late', placeholder.url, true)
  const url = await entry.listening()
  expect(entry.output()).toMatch(/none runs until it reports bubblewrap/)
  await runner('late-off', 'off', port)
  const marker = join(dir, 'marker-late')
  const answer = await commandTurn(url, `touch ${marker}`, 'call_3')
  expect(answer).toMatch(/UNSANDBOXED/)
  expect(existsSync(marker)).toBe(false)
}, 120_000)

it('still runs commands on an unsandboxed runner for one user, loudly warned', async () => {
  const off = await runner('single', 'off')
  const entry = server('single', off.url, false)
  const url = await entry.listening()
  expect(entry.output()).toMatch(/UNSANDBOXED/)
  const marker = join(dir, 'marker-single')
  await commandTurn(url, `touch ${marker}`, 'call_4')
  expect(existsSync(marker)).toBe(true)
}, 120_000)
