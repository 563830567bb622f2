import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { createDeps } from '../../functions/deps.ts'
import { tokenizerForModel } from '../../src/core/compaction/bpe-tokenizer.ts'
import { PIECE_CHARS, RUN_CHARS } from '../../src/core/compaction/counting-pieces.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { Tokenizer } from '../../src/ports/tokenizer.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { shapedText } from '../support/text-shapes.ts'

/**
 * A 400 KB input without a space (base64) — 2 minutes of one synchronous count before counting
 * was bounded, with every other request of the process waiting — proven without a clock: the
 * app's real tokenizer (gpt-tokenizer's o200k) is watched as the turn counts, every call it gets
 * is a bounded piece (so the work is linear in the input), and a `/healthz` sent to the same
 * process once the count is under way answers while pieces of that count are still to come.
 */
const INPUT_CHARS = 400_000

let mock: MockOpenAI
let server: RunningServer
const counted: number[] = []
let probe: Promise<{ status: number; piecesBefore: number }> | undefined
/** The turn's input, once made: pieces of it are what the probe waits for. */
let input = ''

beforeAll(async () => {
  mock = await startMockOpenAI()
  const real = await tokenizerForModel('gpt-4o-mini')
  let inputPieces = 0
  const watched: Tokenizer = {
    encoding: real.encoding,
    count(text) {
      counted.push(text.length)
      // Ten pieces into the long input's count: ask the process for /healthz now.
      if (text.length > 0 && input.includes(text)) inputPieces += 1
      if (!probe && inputPieces === 10) {
        probe = fetch(`${server.url}/healthz`).then((r) => ({
          status: r.status,
          piecesBefore: counted.length,
        }))
      }
      return real.count(text)
    },
  }
  const deps = await createDeps(
    {
      TURNLINE_STORE: 'memory',
      OPENAI_BASE_URL: mock.baseURL,
      OPENAI_API_KEY: 'sk-counting',
      TURNLINE_MODEL: 'gpt-4o-mini',
      // Inline, as the model would read it: a longer input is kept as an artifact instead.
      TURNLINE_TOOL_MAX_RESPONSE_BYTES: String(1024 * 1024),
      TURNLINE_LOG: 'off',
    },
    { tokenizer: async () => watched },
  )
  server = await serveApp(
    createApp({ api: new SessionService(deps.service), auth: deps.auth, ...deps.http }),
  )
})

afterAll(async () => {
  await server?.close()
  await mock?.close()
})

async function post(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: await response.json() }
}

describe('a 400 KB input without spaces', () => {
  it('is counted in bounded pieces while /healthz of the same process answers', async () => {
    const created = await post('/v1/sessions', {})
    expect(created.status).toBe(201)
    const session = (created.json as { session_id: string }).session_id
    input = shapedText('base64', INPUT_CHARS, 3)
    expect(input).not.toMatch(/\s/)
    mock.enqueue({ text: 'received' })
    const turn = await post(`/v1/sessions/${session}/turns`, { input })
    expect(turn.status, JSON.stringify(turn.json).slice(0, 500)).toBe(200)
    expect(turn.json).toMatchObject({ status: 'completed' })
    // The model got the whole input.
    const sent = mock.requests.at(-1)?.body.messages as { role: string; content: string }[]
    expect(sent.some((m) => m.role === 'user' && m.content === input)).toBe(true)

    // Linear: no call of the BPE tokenizer got more than a bounded piece, and the input was
    // counted (the decision stops at its threshold: at least a large part of it).
    expect(Math.max(...counted)).toBeLessThanOrEqual(PIECE_CHARS + RUN_CHARS)
    expect(counted.reduce((sum, n) => sum + n, 0)).toBeGreaterThan(INPUT_CHARS / 4)

    // Responsive: /healthz, sent while the input was being counted, answered before the count
    // of that input ended — a synchronous count would have answered it only afterwards.
    expect(probe).toBeDefined()
    const answered = await probe
    expect(answered?.status).toBe(200)
    expect(answered?.piecesBefore).toBeLessThan(counted.length)
  })
})
