import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import {
  cmdlineOf,
  descendantsOf,
  environOf,
  isGone,
  parentOf,
  waitFor,
} from '../support/proc-tree.ts'

/**
 * `npm start`'s embedded runner is a child process with an environment of its own: nothing that
 * makes the runner read a file as itself (`/proc/self/environ`) can reach the server's keys.
 * It is restarted when it dies, and a server killed with SIGKILL leaves no runner and no
 * command behind.
 */
const OPENAI_KEY = 'sk-server-openai-key-not-for-the-runner'
const TOOL_SECRET = 'tool-secret-not-for-the-runner-0123'
const ACME_KEY = 'acme-api-key-not-for-the-runner-01'
const AWS_SECRET = 'aws-secret-access-key-not-for-the-runner'
const secrets = [OPENAI_KEY, TOOL_SECRET, ACME_KEY, AWS_SECRET]
const PASSED = 'https://pypi.internal.example/simple'

let dir: string
let mock: MockOpenAI
let server: NodeEntry
let url: string
let calls = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-runner-child-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${ACME_KEY}=acme`,
    OPENAI_API_KEY: OPENAI_KEY,
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    AWS_SECRET_ACCESS_KEY: AWS_SECRET,
    // Commands are meant to get this one, so the runner has it.
    TURNLINE_SANDBOX_ENV: 'PIP_INDEX_URL',
    PIP_INDEX_URL: PASSED,
  })
  url = await server.listening()
})

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The runner's process id, as the server's start notice (or its last restart) names it. */
function runnerPid(): number {
  const pids = [...server.output().matchAll(/(?:child process|restarted: pid) (\d+)/g)]
  const pid = Number(pids.at(-1)?.[1])
  if (!Number.isInteger(pid)) throw new Error(`no runner pid in:\n${server.output()}`)
  return pid
}

async function api(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ACME_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = (await response.json()) as Record<string, unknown>
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

/** A turn of a new session in which the model runs `cmd`; the command's output. */
async function runInTurn(cmd: string, yieldMs = 5000): Promise<string> {
  calls += 1
  const session = (await api('/v1/sessions', {})).session_id as string
  const args = JSON.stringify({ cmd, yield_time_ms: yieldMs })
  mock.enqueue(
    { toolCalls: [{ id: `call_${calls}`, name: 'exec_command', arguments: args }] },
    { text: 'done' },
  )
  const turn = await api(`/v1/sessions/${session}/turns`, { input: 'run it' })
  expect(turn.status, JSON.stringify(turn)).toBe('completed')
  const messages = (mock.requests.at(-1)?.body.messages ?? []) as {
    role: string
    content: string
  }[]
  const answer = messages.findLast((m) => m.role === 'tool')?.content ?? '{}'
  return (JSON.parse(answer) as { output: string }).output
}

function expectCleanEnvironment(pid: number): void {
  const env = environOf(pid)
  const text = env.join('\n')
  for (const secret of secrets) expect(text).not.toContain(secret)
  expect(text).not.toMatch(/TURNLINE_|OPENAI_|AWS_/)
  const names = env.map((entry) => entry.slice(0, entry.indexOf('=')))
  expect(
    names.every((name) => ['PATH', 'TMPDIR', 'PIP_INDEX_URL'].includes(name)),
    text,
  ).toBe(true)
  expect(env).toContain(`PIP_INDEX_URL=${PASSED}`)
  for (const secret of secrets) expect(cmdlineOf(pid)).not.toContain(secret)
}

describe('the embedded runner of npm start', () => {
  it("runs in a child process whose environment holds none of the server's secrets", () => {
    const pid = runnerPid()
    const parent = parentOf(pid) ?? -1
    // The parent is the server, and its environment does hold them.
    expect(environOf(parent).join('\n')).toContain(OPENAI_KEY)
    expectCleanEnvironment(pid)
  })

  it('gives commands the TURNLINE_SANDBOX_ENV variables it holds for them', async () => {
    expect(await runInTurn('echo "index=$PIP_INDEX_URL"')).toContain(`index=${PASSED}`)
  })

  it('is restarted when it dies, and commands run again', async () => {
    const first = runnerPid()
    process.kill(first, 'SIGKILL')
    await waitFor(
      () => /the sandbox runner restarted: pid \d+/.test(server.output()),
      () => server.output(),
    )
    expect(server.output()).toMatch(
      new RegExp(`WARNING: the sandbox runner \\(pid ${first}\\) died \\(killed by SIGKILL\\)`),
    )
    const second = runnerPid()
    expect(second).not.toBe(first)
    expectCleanEnvironment(second)
    expect(await runInTurn('echo after-restart')).toContain('after-restart')
  })

  it('ends with its commands when the server is killed (SIGKILL)', async () => {
    const runner = runnerPid()
    const serverPid = parentOf(runner) ?? -1
    const output = await runInTurn('echo started; sleep 600', 500)
    expect(output).toContain('started')
    const below = descendantsOf(runner)
    expect(below.map(cmdlineOf).join('\n')).toMatch(/sleep 600/)

    process.kill(serverPid, 'SIGKILL')
    const left = () => [runner, ...below].filter((pid) => !isGone(pid))
    await waitFor(
      () => left().length === 0,
      () => `still running: ${left().map((pid) => `${pid} ${cmdlineOf(pid)}`)}`,
    )
  })
})
