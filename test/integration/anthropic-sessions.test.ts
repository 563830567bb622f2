import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * Claude sessions through `npm start`'s real entry, configured by ANTHROPIC_* alone, against the
 * mock Messages API (which refuses what the real API refuses: an unsigned or missing thinking
 * block, a tool use without its result, sampling parameters). The model runs commands in the
 * real sandbox runner; the transcript goes back turn after turn from the store, so the prompt
 * cache is read; failures are retried or recovered as documented in docs/models.md.
 */
const MODEL = 'claude-opus-4-7'
let dir: string
let mock: MockAnthropic
let server: NodeEntry
let url: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-anthropic-'))
  mock = await startMockAnthropic()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(dir, 'data'),
    ANTHROPIC_API_KEY: 'sk-ant-entry',
    ANTHROPIC_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: MODEL,
  })
  url = await server.listening()
})
afterEach(() => {
  mock.reset()
})
afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

interface Turn {
  status: string
  events: ThreadEvent[]
}

async function api(path: string, body: unknown, status = 200): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  })
  const json = (await response.json()) as Record<string, unknown>
  const wanted = status === 200 ? response.status < 300 : response.status === status
  if (!wanted) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

const session = async (model: Record<string, unknown> = {}) =>
  (await api('/v1/sessions', { model })).session_id as string
const turn = async (id: string, input: string) =>
  (await api(`/v1/sessions/${id}/turns`, { input })) as unknown as Turn
const items = (t: Turn) => t.events.flatMap((e) => (e.type === 'item.completed' ? [e.item] : []))
const usageOf = (t: Turn) => {
  const end = t.events.find((e) => e.type === 'turn.completed' || e.type === 'turn.failed')
  return end && 'usage' in end ? end.usage : undefined
}
const exec = (cmd: string) => ({
  name: 'exec_command',
  arguments: JSON.stringify({ cmd, yield_time_ms: 5000 }),
})
type Block = Record<string, unknown> & { type: string }
const messagesOf = (n: number) =>
  (mock.requests[n]?.body.messages ?? []) as { role: string; content: Block[] }[]

describe('Claude sessions on npm start', () => {
  it('runs a thinking tool loop over two turns, sending signed thinking back, reading the cache', async () => {
    const id = await session({ reasoning_effort: 'high' })
    mock.enqueue(
      { thinking: 'List the files first.', toolCalls: [exec('echo turnline-was-here')] },
      { redacted: true, text: 'The command printed turnline-was-here.' },
    )
    const first = await turn(id, 'Run echo for me')
    expect(first.status, JSON.stringify(first.events)).toBe('completed')
    expect(items(first)).toMatchObject([
      { type: 'reasoning', text: 'List the files first.' },
      { type: 'tool_invocation', tool_name: 'exec_command' },
      { type: 'tool_output', status: 'completed' },
      { type: 'agent_message', text: 'The command printed turnline-was-here.' },
    ])
    const loop = messagesOf(1)
    const result = loop.at(-1)?.content.find((block) => block.type === 'tool_result')
    expect(JSON.stringify(result)).toContain('turnline-was-here')
    expect(mock.requests[1]?.body).toMatchObject({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    })
    expect(usageOf(first)?.cached_input_tokens).toBeGreaterThan(0)

    mock.enqueue({ text: 'You are welcome.' })
    const second = await turn(id, 'Thanks')
    expect(second.status).toBe('completed')
    // The whole first turn, read back from the store, as the model produced it.
    expect(messagesOf(2).map((m) => [m.role, m.content.map((block) => block.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['thinking', 'tool_use']],
      ['user', ['tool_result']],
      ['assistant', ['redacted_thinking', 'text']],
      ['user', ['text']],
    ])
    const usage = usageOf(second)
    expect(usage?.cached_input_tokens).toBeGreaterThan(0)
    // Only the new user message and the answer before it are written to the cache.
    expect(usage?.cache_creation_tokens).toBeLessThan(usage?.cached_input_tokens ?? 0)
    // Priced at Claude Opus 4.7's rates: cache reads and writes apart from plain input.
    const view = (await fetch(`${url}/v1/sessions/${id}`).then((r) => r.json())) as {
      model: string
      usage: {
        input_tokens: number
        cached_input_tokens: number
        cache_creation_tokens: number
        output_tokens: number
      }
      total_cost_usd: number
      price: Record<string, number>
    }
    expect(view.model).toBe(MODEL)
    expect(view.price).toEqual({
      input: 5e-6,
      output: 25e-6,
      cached_input: 0.5e-6,
      cache_write: 6.25e-6,
    })
    const { input_tokens, cached_input_tokens, cache_creation_tokens, output_tokens } = view.usage
    const plain = input_tokens - cached_input_tokens - cache_creation_tokens
    expect(view.total_cost_usd).toBeCloseTo(
      plain * 5e-6 +
        cached_input_tokens * 0.5e-6 +
        cache_creation_tokens * 6.25e-6 +
        output_tokens * 25e-6,
      12,
    )
  })

  it('retries an overloaded API and completes the turn', async () => {
    const id = await session()
    mock.enqueue({ status: 529, message: 'Overloaded' }, { text: 'Here now.' })
    const done = await turn(id, 'Hello')
    expect(done.status).toBe('completed')
    expect(items(done)).toMatchObject([{ type: 'agent_message', text: 'Here now.' }])
    expect(mock.requests).toHaveLength(2)
  })

  it('compacts and retries when the prompt is too long, keeping the signed thinking of the loop', async () => {
    const id = await session({ reasoning_effort: 'low' })
    mock.enqueue({ text: 'Earlier answer.' })
    expect((await turn(id, 'An earlier question')).status).toBe('completed')
    mock.enqueue(
      { thinking: 'Check the date.', toolCalls: [exec('echo 2026')] },
      { status: 400, message: 'prompt is too long: 1000123 tokens > 1000000 maximum' },
      { text: 'Summary: the user asked an earlier question and got an answer.' },
      { text: 'It is 2026.' },
    )
    const recovered = await turn(id, 'What year is it?')
    expect(recovered.status, JSON.stringify(recovered.events)).toBe('completed')
    expect(recovered.events.map((e) => e.type)).toContain('thread.compact_boundary')
    expect(items(recovered).at(-1)).toMatchObject({ type: 'agent_message', text: 'It is 2026.' })
    // The retry: the memory envelope as system, the loop kept whole (its user message after the
    // continuity tail of earlier user messages, then thinking and tool use, then the result).
    const retried = mock.requests.at(-1)?.body as { system: Block[] }
    expect(JSON.stringify(retried.system[0])).toContain('Summary: the user asked')
    const kept = messagesOf(mock.requests.length - 1).slice(-3)
    expect(kept.map((m) => [m.role, m.content.at(-1)?.type])).toEqual([
      ['user', 'text'],
      ['assistant', 'tool_use'],
      ['user', 'tool_result'],
    ])
    expect(kept[0]?.content.at(-1)).toMatchObject({ text: 'What year is it?' })
    expect(kept[1]?.content[0]).toMatchObject({ type: 'thinking', thinking: 'Check the date.' })
  })

  it('fails a turn whose stream breaks after text, completing the message it began', async () => {
    const id = await session()
    mock.enqueue({
      text: 'I will start answering and then',
      streamError: { type: 'api_error', message: 'Internal server error', afterFrames: 6 },
    })
    const failed = await turn(id, 'Hello')
    expect(failed.status).toBe('failed')
    const started = failed.events.filter((e) => e.type === 'item.started').length
    expect(items(failed)).toHaveLength(started)
    expect(JSON.stringify(failed.events)).toContain('Internal server error')
  })

  it('sends a screenshot as an image block, and again with the transcript on the next turn', async () => {
    const id = await session()
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAcCBlCwAAAABJRU5ErkJggg=='
    mock.enqueue({ text: 'A red button overlaps the form.' }, { text: 'Move it down.' })
    const first = (await api(`/v1/sessions/${id}/turns`, {
      input: [
        { type: 'input_text', text: 'What is wrong on this page?' },
        { type: 'input_image', image_url: png },
        { type: 'input_image', image_url: 'https://example.com/after.webp' },
      ],
    })) as unknown as Turn
    expect(first.status, JSON.stringify(first.events)).toBe('completed')
    expect(await turn(id, 'How do I fix it?')).toMatchObject({ status: 'completed' })
    const images = [
      {
        type: 'image',
        source: { type: 'base64', media_type: 'image/png', data: png.split(',')[1] },
      },
      { type: 'image', source: { type: 'url', url: 'https://example.com/after.webp' } },
    ]
    expect(messagesOf(0)[0]?.content).toMatchObject([{ type: 'text' }, ...images])
    expect(messagesOf(1)[0]?.content).toMatchObject([{ type: 'text' }, ...images])
    // Sent again from the store: the PNG is one object of the session's images/ folder, and no
    // batch or checkpoint carries it inline.
    const files = (await readdir(join(dir, 'data'), { recursive: true })).filter((f) =>
      f.includes(id),
    )
    expect(files.filter((f) => /\/images\/[0-9a-f]{64}\.json$/.test(f))).toHaveLength(1)
    for (const file of files.filter((f) => /\/(log|state)\/\d+\.json$/.test(f))) {
      expect(await readFile(join(dir, 'data', file), 'utf8'), file).not.toContain(';base64,')
    }
  })

  it('refuses sampling parameters on api "anthropic" when the session is created', async () => {
    const refused = await api(
      '/v1/sessions',
      { model: { name: MODEL, api: 'anthropic', temperature: 0.2 } },
      400,
    )
    expect(JSON.stringify(refused)).toContain('takes no temperature')
    expect(mock.requests).toHaveLength(0)
  })
})
