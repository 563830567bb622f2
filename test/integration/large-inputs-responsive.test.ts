import { createHmac, randomBytes } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { setPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { echoTool } from '../support/engine-harness.ts'
import { type PollReport, startHealthPoller } from '../support/health-poller.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { descendantsOf } from '../support/proc-tree.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * One large input never stalls the process: `npm start` takes 1 MB of base64 as a turn's input,
 * as a command's output, as an HTTP tool's answer and as an intent, and a hook matcher written to
 * backtrack, while another process polls `/healthz` every 50 ms — every poll answers within
 * 250 ms, and every turn completes (or the input is refused with a clear error) with all its
 * events committed.
 *
 * The one timing assertion of the suite, on purpose (issue: "every poll answers within 250 ms"):
 * a blocked event loop shows as polls of seconds (token counting took 18 s for 160 KB), while a
 * loop that is never held for more than a few milliseconds leaves ample room on a shared
 * machine. A failure names the worst poll and the phase it fell in.
 */
const KEY = 'acme-large-inputs-key-0123456789'
const TOOL_SECRET = 'large-inputs-tool-secret-0123456789'
const BUDGET_MS = 250
const MB = 1_000_000

let dir: string
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
let server: NodeEntry
let url: string
let poller: Awaited<ReturnType<typeof startHealthPoller>>

/** `chars` characters of base64 of half random, half zero bytes: long runs of `A` and noise. */
function base64Of(chars: number): string {
  const blocks: Buffer[] = []
  for (let size = 0; size < (chars * 3) / 4; size += 3000) {
    blocks.push(blocks.length % 2 === 0 ? randomBytes(3000) : Buffer.alloc(3000))
  }
  return Buffer.concat(blocks).toString('base64').slice(0, chars)
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-large-inputs-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  receiver = await startToolReceiver(createHmac('sha256', TOOL_SECRET).update('acme').digest('hex'))
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    OPENAI_API_KEY: 'sk-large-inputs',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    TURNLINE_TOOL_ALLOWED_HOSTS: receiver.host,
    // The whole 1 MB answer goes into the transcript (the default keeps 64 KiB of it).
    TURNLINE_TOOL_MAX_RESPONSE_BYTES: String(2 * 1024 * 1024),
    TURNLINE_LOG: 'off',
  })
  url = await server.listening()
  // The server and the poller ahead of whatever else shares the machine: what is measured is
  // whether the server's event loop is held, not how busy the host is.
  for (const pid of [server.child.pid ?? 0, ...descendantsOf(server.child.pid ?? 0)]) {
    setPriority(pid, -10)
  }
  // Its first request compiles the routes: not what this test is about.
  expect((await fetch(`${url}/healthz`)).status).toBe(200)
  poller = await startHealthPoller(url, 50)
}, 60_000)

afterAll(async () => {
  await poller?.stop().catch(() => undefined)
  await server?.stop()
  await receiver?.close()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The fields of an answer these tests read. */
interface Answer {
  status?: string
  session_id?: string
  next_seq?: number
  events?: unknown[]
  error?: { code: string; message: string }
}

async function post(path: string, body: unknown): Promise<{ status: number; json: Answer }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: (await response.json()) as Answer }
}

/** Steps a turn and checks it completed and that every event it answered is committed. */
async function completedTurn(session: string, input: string | undefined): Promise<void> {
  const turn = await post(`/v1/sessions/${session}/turns`, input === undefined ? {} : { input })
  expect(turn.status, JSON.stringify(turn.json).slice(0, 500)).toBe(200)
  expect(turn.json.status, JSON.stringify(turn.json.events?.at(-1)).slice(0, 500)).toBe('completed')
  const feed = await fetch(`${url}/v1/sessions/${session}/events?after=-1&limit=5000`, {
    headers: { authorization: `Bearer ${KEY}` },
  })
  const lines = (await feed.text()).trim().split('\n')
  expect(lines).toHaveLength(turn.json.next_seq ?? -1)
  expect(JSON.parse(lines.at(-1) as string).event.type).toBe('turn.completed')
}

async function newSession(body: Record<string, unknown> = {}): Promise<string> {
  const created = await post('/v1/sessions', body)
  expect(created.status, JSON.stringify(created.json)).toBe(201)
  return created.json.session_id as string
}

function lastToolMessage(): string {
  const messages = (mock.requests.at(-1)?.body.messages ?? []) as {
    role: string
    content: string
  }[]
  return messages.findLast((m) => m.role === 'tool')?.content ?? ''
}

describe('large inputs while /healthz is polled every 50 ms', () => {
  it('1 MB of base64 as a turn input', async () => {
    poller.mark('turn input')
    const session = await newSession()
    const input = base64Of(MB)
    mock.enqueue({ text: 'received' })
    await completedTurn(session, input)
    const sent = mock.requests.at(-1)?.body.messages as { role: string; content: string }[]
    expect(sent.some((m) => m.role === 'user' && m.content === input)).toBe(true)
  })

  it('1 MB of base64 printed by a command', async () => {
    poller.mark('command output')
    const session = await newSession()
    const cmd = '(head -c 375000 /dev/zero; head -c 375000 /dev/urandom) | base64 -w0'
    mock.enqueue(
      {
        toolCalls: [
          {
            id: 'call_b64',
            name: 'exec_command',
            arguments: JSON.stringify({ cmd, yield_time_ms: 20_000 }),
          },
        ],
      },
      { text: 'printed' },
    )
    await completedTurn(session, 'print it')
    // The model reads a bounded preview; the whole output is in the spool.
    const answer = JSON.parse(lastToolMessage()) as { output: string; spool_path?: string }
    expect(answer.output.length).toBeLessThan(16 * 1024)
    expect(answer.spool_path).toBeDefined()
  })

  it('1 MB of base64 answered by an HTTP tool', async () => {
    poller.mark('http tool answer')
    const answer = JSON.stringify({ output: base64Of(MB) })
    receiver.setReply(() => ({ body: answer }))
    const session = await newSession({ tools: [echoTool(receiver.url)] })
    mock.enqueue(
      {
        toolCalls: [{ id: 'call_http', name: 'lookup', arguments: JSON.stringify({ q: 'blob' }) }],
      },
      { text: 'looked up' },
    )
    await completedTurn(session, 'look it up')
    expect(lastToolMessage()).toBe(answer)
  })

  it('1 MB of base64 as an intent is accepted and applied whole', async () => {
    poller.mark('intent')
    const session = await newSession()
    // Under this server's 2 MiB inline limit the whole text reaches the model and is counted
    // (over the limit it would be kept as an artifact: test/integration/intent-artifacts.test.ts).
    const text = base64Of(MB)
    const accepted = await post(`/v1/sessions/${session}/intents`, { text })
    expect(accepted.status).toBe(202)
    mock.enqueue({ text: 'steered' })
    await completedTurn(session, 'go on')
    const sent = mock.requests.at(-1)?.body.messages as { role: string; content: string }[]
    expect(sent.some((m) => m.role === 'user' && m.content.includes(text))).toBe(true)
  })

  // Backtracking alone, `^(?:(a|a)*b)$` would try 2^64 ways against that name; V8's own linear
  // engine takes over the first, but runs `{0,100}` only by backtracking.
  it.each(['(a|a)*b', '(?:a|a){0,100}b'])(
    'a hook matcher written to backtrack against a tool name it names: %s',
    async (matcher) => {
      poller.mark(`backtracking matcher ${matcher}`)
      const name = 'a'.repeat(64)
      const session = await newSession({
        tools: [{ ...echoTool(receiver.url), name }],
        hooks: [{ event: 'pre_tool_use', type: 'http', url: receiver.url, matcher }],
      })
      receiver.setReply(() => ({ body: '{"ok":true}' }))
      mock.enqueue(
        { toolCalls: [{ id: 'call_aaa', name, arguments: JSON.stringify({ q: 'x' }) }] },
        { text: 'called' },
      )
      await completedTurn(session, 'call it')
      expect(lastToolMessage()).toBe('{"ok":true}')
    },
  )

  it('a hook matcher with a back-reference (nothing bounds its backtracking) is refused', async () => {
    const refused = await post('/v1/sessions', {
      hooks: [{ event: 'pre_tool_use', type: 'http', url: receiver.url, matcher: '(a|a)*\\1b' }],
    })
    expect(refused.status).toBe(400)
    expect(refused.json.error?.message).toMatch(/back-references are not supported/)
  })

  it('a test command pattern written to backtrack, against a command the model ran', async () => {
    poller.mark('test command pattern')
    const session = await newSession({ harness: { test_command_pattern: '(?:a|a){0,100}b' } })
    const cmd = `echo ${'a'.repeat(64)}`
    mock.enqueue(
      { toolCalls: [{ id: 'call_aa', name: 'exec_command', arguments: JSON.stringify({ cmd }) }] },
      { text: 'ran' },
    )
    await completedTurn(session, 'run it')
    // The handoff looks for the last test command among the commands run: too costly a pattern
    // for them is refused, and a command named instead is found.
    const refused = await post(`/v1/sessions/${session}/handoff`, {})
    expect(refused.status, JSON.stringify(refused.json)).toBe(400)
    expect(refused.json.error?.message).toMatch(/^harness\.test_command_pattern: the pattern needs/)
    const named = await post(`/v1/sessions/${session}/handoff`, { test_command: cmd })
    expect(named.status, JSON.stringify(named.json)).toBe(200)
  })

  it('a read_tool_output regex that costs too much a character, over a line a command printed', async () => {
    poller.mark('costly regex')
    const session = await newSession()
    // One line of 2.5 MB, over this server's 2 MiB inline limit: kept as an artifact.
    const cmd = "head -c 2500000 /dev/zero | tr '\\0' a"
    const exec = { cmd, yield_time_ms: 20_000 }
    mock.enqueue({
      toolCalls: [{ id: 'call_line', name: 'exec_command', arguments: JSON.stringify(exec) }],
    })
    mock.respond(() => {
      const { output_artifact_id } = JSON.parse(lastToolMessage()) as { output_artifact_id: string }
      mock.respond(() => ({ text: 'searched' }))
      // Linear, but ~2,000 steps at every position of the line's first 64 KiB: 8 s of the loop.
      const read = { artifact_id: output_artifact_id, regex: '.{0,1000}x' }
      const call = { id: 'call_regex', name: 'read_tool_output', arguments: JSON.stringify(read) }
      return { toolCalls: [call] }
    })
    try {
      await completedTurn(session, 'search it')
    } finally {
      mock.respond(undefined)
    }
    expect(lastToolMessage()).toMatch(/^regex: the pattern needs more than 32 steps a character/)
  })

  it('answered every poll within 250 ms', async () => {
    const report: PollReport = await poller.stop()
    const slow = [...report.polls, ...report.pending].filter((poll) => poll.ms > BUDGET_MS)
    const worst = report.worst
    const summary =
      `${report.polls.length} polls, ${report.pending.length} unanswered; worst ${worst?.ms} ms ` +
      `(${worst?.phase}, ${worst?.at} ms after the start); over ${BUDGET_MS} ms: ` +
      JSON.stringify(slow.slice(0, 10))
    console.log(`healthz under large inputs: ${summary}`)
    expect(report.polls.length, summary).toBeGreaterThan(20)
    expect(
      report.polls.every((poll) => poll.status === 200),
      summary,
    ).toBe(true)
    expect(slow, summary).toEqual([])
  })
})
