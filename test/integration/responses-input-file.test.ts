import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { startEngineServer } from '../support/engine-harness.ts'

/**
 * `input_file` parts of `POST /v1/responses` (the specification's InputFileContent): over real
 * HTTP, the real engine and OpenAI adapter, the mock OpenAI server as the model. A PDF reaches
 * Chat Completions as a `file` part and is stored once by reference (never inline in a batch or
 * checkpoint), sent again when the conversation continues; a text file reaches the model as text,
 * an image file as an image; `file_id`, `file_url` and other kinds of file are 400s naming the
 * field.
 */
const KEY = 'input-file-key-0123456789'
const PDF_BYTES =
  '%PDF-1.4\n1 0 obj << /Title (Quarterly report) >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'
const PDF = `data:application/pdf;base64,${Buffer.from(PDF_BYTES).toString('base64')}`
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='

let harness: Awaited<ReturnType<typeof startEngineServer>>
let engine: Awaited<ReturnType<typeof startEngineServer>>['engine']

beforeAll(async () => {
  harness = await startEngineServer(KEY, 'tenant-file')
  engine = harness.engine
})
afterAll(() => harness?.close())
beforeEach(() => engine.mock.reset())

type Json = Record<string, unknown>
async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${harness.server.url}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: res.status, body: (await res.json()) as Json }
}

const ask = (file: Json, text = 'What is the title of the attached file?') => ({
  model: 'gpt-4o-mini',
  input: [
    {
      role: 'user',
      content: [
        { type: 'input_text', text },
        { type: 'input_file', ...file },
      ],
    },
  ],
})

/** The user messages of the model request the mock received `n`-th. */
const users = (n: number) =>
  ((engine.mock.requests[n]?.body.messages ?? []) as Json[]).filter((m) => m.role === 'user')

describe('input_file', () => {
  it('sends a PDF as a Chat Completions file part, stores it once, and sends it again later', async () => {
    engine.mock.enqueue({ text: 'Quarterly report' })
    const first = await call('POST', '/responses', ask({ filename: 'report.pdf', file_data: PDF }))
    expect(first.status, JSON.stringify(first.body)).toBe(200)
    expect(first.body.status).toBe('completed')
    const pdfMessage = {
      role: 'user',
      content: [{ type: 'file', file: { filename: 'report.pdf', file_data: PDF } }],
    }
    expect(users(0)).toEqual([
      pdfMessage,
      { role: 'user', content: 'What is the title of the attached file?' },
    ])

    // Stored once in the response's folder, never inline in its log or checkpoints.
    const sessionId = String(first.body.id).slice('resp_'.length)
    const keys = (await engine.store.list('')).objects
      .map((object) => object.key)
      .filter((key) => key.includes(sessionId))
    expect(keys.filter((key) => /\/files\/[0-9a-f]{64}\.json$/.test(key))).toHaveLength(1)
    for (const key of keys.filter((k) => /\/(log|state)\//.test(k))) {
      const body = new TextDecoder().decode((await engine.store.get(key))?.body)
      expect(body, key).not.toContain(';base64,')
      expect(body, key).not.toContain(Buffer.from(PDF_BYTES).toString('base64'))
    }

    // Listed as an input item, and sent again when the conversation continues.
    const items = await call('GET', `/responses/${first.body.id}/input_items?order=asc`)
    expect((items.body.data as Json[])[0]).toMatchObject({
      role: 'user',
      content: [{ type: 'input_file', filename: 'report.pdf', file_data: PDF }],
    })
    engine.mock.enqueue({ text: 'One page.' })
    const next = await call('POST', '/responses', {
      previous_response_id: first.body.id,
      input: 'How many pages?',
    })
    expect(next.status).toBe(200)
    expect(users(1)).toContainEqual(pdfMessage)
    engine.mock.assertDone()
  })

  it('sends a text file as text and an image file as an image', async () => {
    engine.mock.enqueue({ text: 'Two rows.' }, { text: 'A dot.' })
    const csv = Buffer.from('name,qty\nbolts,4\nnuts,7\n').toString('base64')
    const text = await call('POST', '/responses', ask({ filename: 'stock.csv', file_data: csv }))
    expect(text.status, JSON.stringify(text.body)).toBe(200)
    expect(users(0)).toEqual([
      {
        role: 'user',
        content:
          'What is the title of the attached file?\n\n--- file: stock.csv ---\nname,qty\nbolts,4\nnuts,7\n\n--- end of file: stock.csv ---',
      },
    ])
    const image = await call(
      'POST',
      '/responses',
      ask({ filename: 'dot.png', file_data: `data:image/png;base64,${PNG}` }),
    )
    expect(image.status).toBe(200)
    expect(users(1)).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is the title of the attached file?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        ],
      },
    ])
    engine.mock.assertDone()
  })

  it('refuses file_id, file_url and files no model reads, naming the field', async () => {
    const cases: [Json, string][] = [
      [{ file_id: 'file-abc' }, 'input[0].content[1].file_id'],
      [{ file_url: 'https://example.com/report.pdf' }, 'input[0].content[1].file_url'],
      [
        { filename: 'a.zip', file_data: 'data:application/zip;base64,UEsDBA==' },
        'input[0].content[1]',
      ],
      [
        { filename: 'notes.txt', file_data: 'data:text/plain;base64,/w==' },
        'input[0].content[1].file_data',
      ],
      [
        { filename: 'x.pdf', file_data: 'data:application/pdf;base64,***' },
        'input[0].content[1].file_data',
      ],
    ]
    for (const [file, param] of cases) {
      const refused = await call('POST', '/responses', ask(file))
      expect(refused.status, JSON.stringify(file)).toBe(400)
      expect(refused.body.error, JSON.stringify(file)).toMatchObject({
        type: 'invalid_request',
        param,
      })
    }
    expect(engine.mock.requests).toHaveLength(0)
  })
})
