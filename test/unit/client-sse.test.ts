import { describe, expect, it } from 'vitest'
import { apiErrorOf, TurnlineApiError } from '../../client/errors.ts'
import { type SseFrame, sseFrames } from '../../client/sse.ts'

/** A body that arrives in exactly these chunks (split anywhere, even inside a UTF-8 character). */
function body(...chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) {
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk)
      }
      controller.close()
    },
  })
}

async function frames(stream: ReadableStream<Uint8Array>): Promise<SseFrame[]> {
  const all: SseFrame[] = []
  for await (const frame of sseFrames(stream)) all.push(frame)
  return all
}

describe('sseFrames', () => {
  it('reads frames split across chunks, CRLF or LF, skipping comments', async () => {
    const snowman = new TextEncoder().encode('☃')
    const read = await frames(
      body(
        ': keep-alive\n\nid: 1\nevent: turn.started\nda',
        'ta: {"type":"turn.started"}\r\n\r\nid: 2\ndata: {"t":"',
        snowman.slice(0, 1),
        snowman.slice(1),
        '"}\ndata: second line\n\n',
      ),
    )
    expect(read).toEqual([
      { id: '1', event: 'turn.started', data: '{"type":"turn.started"}' },
      { id: '2', data: '{"t":"☃"}\nsecond line' },
    ])
  })

  it('drops a last frame the stream ended in the middle of', async () => {
    const read = await frames(body('id: 1\ndata: {"a":1}\n\nid: 2\ndata: {"type":"ite'))
    expect(read).toEqual([{ id: '1', data: '{"a":1}' }])
    // Without its blank line a complete-looking frame is still not dispatched.
    expect(await frames(body('id: 3\ndata: {"a":3}\n'))).toEqual([])
  })
})

describe('apiErrorOf', () => {
  it('reads the error body, and an in-stream error gets the status its code maps to', () => {
    const body = '{"error":{"code":"session_busy","message":"busy","details":{"field":"x"}}}'
    const error = apiErrorOf(409, body, { retryAfterSeconds: 2, idempotencyKey: 'k' })
    expect(error).toBeInstanceOf(TurnlineApiError)
    expect(error).toMatchObject({
      status: 409,
      code: 'session_busy',
      message: 'busy',
      details: { field: 'x' },
      retryAfterSeconds: 2,
      idempotencyKey: 'k',
      retryable: true,
      inStream: false,
    })
    const inStream = apiErrorOf(
      undefined,
      '{"error":{"code":"storage_unavailable","message":"s3"}}',
      {
        inStream: true,
      },
    )
    expect(inStream).toMatchObject({ status: 503, inStream: true, retryable: true })
    // A code this version does not know is kept as sent.
    expect(apiErrorOf(undefined, '{"error":{"code":"brand_new","message":"m"}}')).toMatchObject({
      status: 500,
      code: 'brand_new',
    })
  })

  it("turns a gateway's page into http_error, retryable only for 502/503/504", () => {
    const page = apiErrorOf(502, '<html>Bad Gateway</html>')
    expect(page).toMatchObject({ status: 502, code: 'http_error', retryable: true })
    expect(page.message).toContain('Bad Gateway')
    expect(apiErrorOf(404, 'Not Found')).toMatchObject({ code: 'http_error', retryable: false })
  })
})
