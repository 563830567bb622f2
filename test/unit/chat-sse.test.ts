import { APIError } from 'openai'
import { describe, expect, it } from 'vitest'
import { chatChunks, MAX_FRAME_CHARS } from '../../adapters/openai/chat-sse.ts'
import { ProviderStreamError } from '../../adapters/openai/model-failure.ts'

/** A streamed response whose body arrives in exactly these pieces. */
function streamed(pieces: string[]): Response {
  const encoder = new TextEncoder()
  let i = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const piece = pieces[i++]
      if (piece === undefined) controller.close()
      else controller.enqueue(encoder.encode(piece))
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
}

async function chunks(pieces: string[]): Promise<unknown[]> {
  const out: unknown[] = []
  for await (const chunk of chatChunks(streamed(pieces))) out.push(chunk)
  return out
}

const chunk = (n: number) => ({ id: `c${n}`, choices: [{ index: 0, delta: { content: `${n}` } }] })
const data = (value: unknown) => `data: ${JSON.stringify(value)}`

describe('chatChunks (Chat Completions SSE body)', () => {
  it('reads events split anywhere, with \\n, \\r\\n or \\r line ends, and stops at [DONE]', async () => {
    const text =
      `${data(chunk(1))}\n\n` +
      `${data(chunk(2))}\r\n\r\n` +
      `: keep-alive\r\r` +
      `${data(chunk(3))}\r\r` +
      'data: [DONE]\n\n' +
      `${data(chunk(4))}\n\n`
    const expected = [chunk(1), chunk(2), chunk(3)]
    expect(await chunks([text])).toEqual(expected)
    // every split point, including between \r and \n and inside a multi-byte character
    for (let at = 1; at < text.length; at++) {
      expect(await chunks([text.slice(0, at), text.slice(at)])).toEqual(expected)
    }
    expect(await chunks([...text])).toEqual(expected)
  })

  it('keeps multi-byte characters split across reads', async () => {
    const value = { id: 'u', choices: [{ index: 0, delta: { content: 'grüße 👋' } }] }
    const bytes = new TextEncoder().encode(`${data(value)}\n\n`)
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const byte of bytes) controller.enqueue(new Uint8Array([byte]))
        controller.close()
      },
    })
    const out: unknown[] = []
    for await (const c of chatChunks(new Response(body))) out.push(c)
    expect(out).toEqual([value])
  })

  it('joins multi-line data, skips events without data and drops an unterminated last event', async () => {
    const value = chunk(5)
    const [head, tail] = [JSON.stringify(value).slice(0, 10), JSON.stringify(value).slice(10)]
    expect(
      await chunks([
        `event: message\ndata: ${head}\ndata:${tail}\n\n`,
        'id: 7\n\n',
        data(chunk(6)),
      ]),
    ).toEqual([JSON.parse(`${head}\n${tail}`)])
  })

  it('throws an APIError for an error chunk and a SyntaxError for unparseable data', async () => {
    const failure = chunks([
      `${data(chunk(1))}\n\n`,
      `${data({ error: { code: 'server_error', message: 'boom' } })}\n\n`,
    ])
    await expect(failure).rejects.toBeInstanceOf(APIError)
    await expect(failure).rejects.toMatchObject({ code: 'server_error', status: undefined })
    await expect(chunks(['data: {not json\n\n'])).rejects.toBeInstanceOf(SyntaxError)
  })

  it('cancels the body when the reader stops early', async () => {
    let cancelled = false
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(new TextEncoder().encode(`${data(chunk(1))}\n\n`))
      },
      cancel() {
        cancelled = true
      },
    })
    for await (const _ of chatChunks(new Response(body))) break
    expect(cancelled).toBe(true)
  })

  it('fails a line that does not end within MAX_FRAME_CHARS, and cancels the body', async () => {
    const piece = new TextEncoder().encode('x'.repeat(64 * 1024))
    let sent = 0
    let cancelled = false
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('data: '))
      },
      pull(controller) {
        // Past the bound and two pieces more the body ends (a reader without one just ends).
        if (sent > MAX_FRAME_CHARS + piece.length) return controller.close()
        sent += piece.length
        controller.enqueue(piece)
      },
      cancel() {
        cancelled = true
      },
    })
    const reading = (async () => {
      for await (const _ of chatChunks(new Response(body))) {
        // no chunk is complete
      }
    })()
    await expect(reading).rejects.toThrow(ProviderStreamError)
    await expect(reading).rejects.toMatchObject({ code: 'frame_too_large' })
    expect(cancelled).toBe(true)
    expect(sent).toBeLessThanOrEqual(MAX_FRAME_CHARS + piece.length)
  })
})
