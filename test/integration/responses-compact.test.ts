import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { itemErrors } from '../support/open-responses-schema.ts'
import { type ResponsesApp, startResponsesApp } from '../support/responses-app.ts'

/**
 * `POST /v1/responses/compact` (the specification's compactResponse): the conversation is
 * compacted with one summary call and answered as a `response.compaction` whose output is the
 * kept user messages, then one `compaction` item; that output sent back as `input` continues
 * the conversation from the summary. Nothing is kept on the server.
 */
let app: ResponsesApp

beforeAll(async () => {
  app = await startResponsesApp('responses-compact-key-0123456789', 'tenant-k')
})
afterAll(async () => {
  await app?.close()
})
beforeEach(() => app.engine.mock.reset())

type Json = Record<string, unknown>
const SUMMARY = '## Goal\nKeep the code word slate.'

async function compact(body: unknown) {
  const res = await fetch(`${app.server.url}/v1/responses/compact`, {
    method: 'POST',
    headers: { ...app.auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

const CONVERSATION = [
  { role: 'user', content: [{ type: 'input_text', text: 'Remember the code word: slate.' }] },
  { role: 'assistant', content: [{ type: 'output_text', text: 'OK, noted.' }] },
  { role: 'user', content: [{ type: 'input_text', text: 'Compress this conversation.' }] },
]

/** The texts of the model request the mock received last, by role. */
function sentMessages(): { role: string; content: string }[] {
  const messages = (app.engine.mock.requests.at(-1)?.body.messages ?? []) as Json[]
  return messages.map((m) => ({
    role: String(m.role),
    content:
      typeof m.content === 'string'
        ? m.content
        : ((m.content ?? []) as { text?: string }[]).map((p) => p.text ?? '').join(''),
  }))
}

describe('POST /v1/responses/compact', () => {
  it('answers the kept user messages and one compaction item, which continue the conversation', async () => {
    app.engine.mock.enqueue({ text: SUMMARY })
    const { status, body } = await compact({ model: 'gpt-4o-mini', input: CONVERSATION })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(body).toMatchObject({ object: 'response.compaction' })
    expect(String(body.id)).toMatch(/^cmp_/)
    expect(body.created_at).toEqual(expect.any(Number))
    expect(body.usage).toMatchObject({
      input_tokens: expect.any(Number),
      output_tokens: expect.any(Number),
      total_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: expect.any(Number) },
    })
    const output = body.output as Json[]
    for (const item of output) expect(itemErrors(item)).toEqual([])
    // The user messages the compaction kept (the last, unanswered, is only summarized), then the
    // compaction item.
    expect(output.map((item) => item.type)).toEqual(['message', 'compaction'])
    expect(output[0]).toMatchObject({
      role: 'user',
      status: 'completed',
      content: [{ type: 'input_text', text: 'Remember the code word: slate.' }],
    })
    // The summary call read the conversation.
    expect(JSON.stringify(app.engine.mock.requests.at(-1)?.body)).toContain('OK, noted.')

    app.engine.mock.enqueue({ text: 'compacted' })
    const next = await app.create({
      input: [
        ...output,
        { role: 'user', content: 'Continue from here. Reply with exactly: compacted' },
      ],
    })
    expect(next.status).toBe('completed')
    const sent = sentMessages()
    const texts = sent.map((m) => m.content).join('\n')
    expect(texts).toContain(SUMMARY)
    expect(texts).toContain('Remember the code word: slate.')
    expect(texts).not.toContain('OK, noted.')
    expect(sent.at(-1)).toEqual({
      role: 'user',
      content: 'Continue from here. Reply with exactly: compacted',
    })
    // Nothing of the compaction is kept.
    const gone = await fetch(
      `${app.server.url}/v1/responses/resp_${String(body.id).slice('cmp_'.length)}`,
      { headers: app.auth },
    )
    expect(gone.status).toBe(404)
  })

  it("compacts a response's whole conversation by previous_response_id", async () => {
    app.engine.mock.enqueue({ text: 'The code word is noted.' })
    const first = await app.create({ input: 'Remember the code word: cobalt.' })
    app.engine.mock.enqueue({ text: SUMMARY })
    const { status, body } = await compact({ previous_response_id: first.id })
    expect(status, JSON.stringify(body)).toBe(200)
    expect(JSON.stringify(app.engine.mock.requests.at(-1)?.body)).toContain(
      'The code word is noted.',
    )
    expect(JSON.stringify(app.engine.mock.requests.at(-1)?.body)).toContain(
      'Remember the code word: cobalt.',
    )
    expect((body.output as Json[]).at(-1)).toMatchObject({ type: 'compaction' })
  })

  it('refuses what it cannot compact with the specification error envelope', async () => {
    const empty = await compact({ model: 'gpt-4o-mini' })
    expect(empty.status).toBe(400)
    expect(empty.body.error).toMatchObject({ type: 'invalid_request', param: 'input' })

    const missing = await compact({ previous_response_id: 'resp_no-such-response' })
    expect(missing.status).toBe(404)
    expect(missing.body.error).toMatchObject({ type: 'not_found', param: 'previous_response_id' })

    const unknown = await compact({ input: 'x', truncation: 'auto' })
    expect(unknown.status).toBe(400)

    const forged = await app.post({
      input: [
        { type: 'compaction', id: 'cmp_x', encrypted_content: 'gAAAAB-not-ours' },
        { role: 'user', content: 'Go on.' },
      ],
    })
    expect(forged.status).toBe(400)
    expect(((await forged.json()) as Json).error).toMatchObject({ param: 'input' })
    expect(app.engine.mock.requests).toHaveLength(0)
  })
})
