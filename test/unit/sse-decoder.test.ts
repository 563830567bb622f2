import { describe, expect, it } from 'vitest'
import { SseDecoder, type SseFrame } from '../../src/shared/sse-decoder.ts'

/** The frames of `pieces` pushed one after the other. */
function decoded(pieces: string[], onComment?: (line: string) => void): SseFrame[] {
  const decoder = new SseDecoder(onComment)
  return pieces.flatMap((piece) => decoder.push(piece))
}

describe('SseDecoder (the one Server-Sent Events decoder)', () => {
  const text =
    ': keep-alive\n\n' +
    'id: 1\nevent: turn.started\ndata: {"a":1}\n\n' +
    'id: 2\r\ndata:{"b":2}\r\ndata: second line\r\n\r\n' +
    'event: x\rdata: three\r\r' +
    'id: 4\n\n' +
    'event: only\n\n' +
    'data:\n\n' +
    'data: torn'
  const expected: SseFrame[] = [
    { id: '1', event: 'turn.started', data: '{"a":1}' },
    { id: '2', data: '{"b":2}\nsecond line' },
    { event: 'x', data: 'three' },
    { data: '' },
  ]

  it('reads \\n, \\r\\n and \\r line ends, joins data lines, skips frames without data', () => {
    expect(decoded([text])).toEqual(expected)
  })

  it('gives the same frames however the text is split, between \\r and \\n included', () => {
    for (let at = 1; at < text.length; at++) {
      expect(decoded([text.slice(0, at), text.slice(at)])).toEqual(expected)
    }
    expect(decoded([...text])).toEqual(expected)
  })

  it('hands comment lines to onComment; id and event belong to their own frame', () => {
    const comments: string[] = []
    const frames = decoded([': ping\nid: 7\nevent: e\n\n: pong\ndata: d\n\n'], (line) =>
      comments.push(line),
    )
    expect(comments).toEqual([': ping', ': pong'])
    expect(frames).toEqual([{ data: 'd' }])
  })
})
