import { createHash, createHmac } from 'node:crypto'
import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Schema, Validator } from '@cfworker/json-schema'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TurnlineClient } from '../../client/index.ts'
import { runCli } from '../support/cli-process.ts'
import { echoTool } from '../support/engine-harness.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * Hook answers over the inline limit (64 KiB) through `npm start`'s real entry: a
 * `post_tool_use` hook's and a `stop` hook's long answers — which no deny reason names — are
 * recorded by the batch that commits the hook's effect, listed by `GET …/artifacts` as hook
 * answers with their sizes, read back whole by `GET …/artifacts/{id}`, and listed by the CLI;
 * the event stream names none of them.
 */
const KEY = 'acme-hook-answers-key-0123456789'
const TOOL_SECRET = 'hook-answers-tool-secret-0123456789'
const TENANT_SECRET = createHmac('sha256', TOOL_SECRET).update('acme').digest('hex')

let dir: string
let mock: MockOpenAI
let receiver: Awaited<ReturnType<typeof startToolReceiver>>
let hooks: Awaited<ReturnType<typeof startHookReceiver>>
let server: NodeEntry
let url: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-hook-answers-'))
  await chmod(dir, 0o711)
  mock = await startMockOpenAI()
  receiver = await startToolReceiver(TENANT_SECRET)
  hooks = await startHookReceiver(TENANT_SECRET)
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    TURNLINE_API_KEYS: `${KEY}=acme`,
    OPENAI_API_KEY: 'sk-hook-answers',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
    TURNLINE_TOOL_ALLOWED_HOSTS: `${receiver.host},${hooks.host}`,
    TURNLINE_LOG: 'off',
  })
  url = await server.listening()
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await hooks?.close()
  await receiver?.close()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const headers = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }
const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  })
  return (await response.json()) as Record<string, unknown>
}

/** `lines` lines of `width` characters and a JSON object around them: a hook's answer. */
function longAnswer(lines: number, width: number, mark: string): string {
  const rows = Array.from({ length: lines }, (_, n) => `${mark} ${String(n).padStart(width, '0')}`)
  return JSON.stringify({ notes: rows }, null, 1)
}

describe('hook answers over the inline limit', () => {
  const postAnswer = longAnswer(4_000, 40, 'post')
  const stopAnswer = longAnswer(6_000, 50, 'stop')
  let session: string

  it('are listed by GET …/artifacts as hook answers, with their sizes, and read back whole', async () => {
    expect(postAnswer.length).toBeGreaterThan(64 * 1024)
    expect(stopAnswer.length).toBeGreaterThan(64 * 1024)
    hooks.setReply((hook) => ({ body: hook.path === '/post' ? postAnswer : stopAnswer }))
    receiver.setReply(() => ({ body: 'found it' }))
    const created = await post('/v1/sessions', {
      tools: [echoTool(receiver.url)],
      hooks: [
        { event: 'post_tool_use', type: 'http', name: 'audit', url: hooks.url('/post') },
        { event: 'stop', type: 'http', url: hooks.url('/stop') },
      ],
    })
    session = String(created.session_id)
    mock.enqueue(
      { toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' }] },
      { text: 'done' },
    )
    const turn = await post(`/v1/sessions/${session}/turns`, { input: 'look it up' })
    expect(turn.status, JSON.stringify(turn).slice(0, 400)).toBe('completed')
    expect(hooks.received.map((hook) => hook.path).sort()).toEqual(['/post', '/stop'])

    const listing = await fetch(`${url}/v1/sessions/${session}/artifacts`, { headers })
    expect(listing.status).toBe(200)
    const { outputs } = (await listing.json()) as { outputs: Record<string, unknown>[] }
    expect(outputs).toEqual([
      {
        kind: 'hook_answer',
        seq: expect.any(Number),
        turn_id: 'turn-1',
        event: 'post_tool_use',
        hook: 'audit',
        hook_index: 0,
        hook_type: 'http',
        tool_call_id: 'call_1',
        artifact_id: expect.stringMatching(/^out_[0-9a-f]{32}$/),
        size: postAnswer.length,
        lines: postAnswer.split('\n').length,
      },
      {
        kind: 'hook_answer',
        seq: expect.any(Number),
        turn_id: 'turn-1',
        event: 'stop',
        hook: 'stop#1',
        hook_index: 1,
        hook_type: 'http',
        artifact_id: expect.stringMatching(/^out_[0-9a-f]{32}$/),
        size: stopAnswer.length,
        lines: stopAnswer.split('\n').length,
      },
    ])
    // The answer is what the OpenAPI document says, to the field.
    type Doc = {
      paths: Record<string, Record<string, Record<string, unknown>>>
      components: object
    }
    const doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as Doc
    const operation = doc.paths['/v1/sessions/{id}/artifacts']?.get as {
      responses: Record<string, { content: Record<string, { schema: object }> }>
    }
    const schema = operation.responses['200']?.content['application/json']?.schema
    const validator = new Validator(
      { ...schema, components: doc.components } as Schema,
      '2020-12',
      false,
    )
    const checked = validator.validate({ outputs })
    expect(checked.errors.map((e) => `${e.instanceLocation}: ${e.error}`)).toEqual([])
    expect(validator.validate({ outputs: [{ ...outputs[0], kind: 'tool_output' }] }).valid).toBe(
      false,
    )

    for (const [entry, answer] of [
      [outputs[0], postAnswer],
      [outputs[1], stopAnswer],
    ] as const) {
      const whole = await fetch(`${url}/v1/sessions/${session}/artifacts/${entry?.artifact_id}`, {
        headers,
      })
      expect(whole.status).toBe(200)
      expect(sha(new Uint8Array(await whole.arrayBuffer()))).toBe(sha(answer))
    }

    // VT Code's event stream names no hook answer.
    const events = await fetch(`${url}/v1/sessions/${session}/events`, { headers })
    const feed = await events.text()
    for (const entry of outputs) expect(feed).not.toContain(String(entry.artifact_id))
  })

  it('are listed by the typed client and the CLI', async () => {
    const client = new TurnlineClient({ baseUrl: url, apiKey: KEY })
    const listed = await client.outputs.list(session)
    expect(listed.outputs.map((o) => (o.kind === 'hook_answer' ? o.event : o.kind))).toEqual([
      'post_tool_use',
      'stop',
    ])
    const [post, stop] = listed.outputs
    const cli = await runCli(['artifact', session, '--url', url, '--api-key', KEY])
    expect(cli.code, cli.stderr).toBe(0)
    expect(cli.stdout).toBe(
      `${post?.artifact_id}\t${postAnswer.length} bytes\t${post?.lines} lines\thook post_tool_use audit\tcall_1\n` +
        `${stop?.artifact_id}\t${stopAnswer.length} bytes\t${stop?.lines} lines\thook stop stop#1\t\n`,
    )
    const printed = await runCli([
      'artifact',
      session,
      String(stop?.artifact_id),
      '--range',
      '0-99',
      '--url',
      url,
      '--api-key',
      KEY,
    ])
    expect(printed.stdout).toBe(stopAnswer.slice(0, 100))
  })
})
