import { afterEach, describe, expect, it, vi } from 'vitest'
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

  it('looks at each character of a long line about once, however many pushes carry it', () => {
    // Counted as the characters handed to the line-end scan (RegExp test from lastIndex on):
    // the decoder once scanned the whole open line again at each push.
    const test = RegExp.prototype.test
    let offered = 0
    vi.spyOn(RegExp.prototype, 'test').mockImplementation(function (this: RegExp, subject) {
      offered += String(subject).length - (this.global ? this.lastIndex : 0)
      return test.call(this, subject)
    })
    const piece = 'x'.repeat(1024)
    const decoder = new SseDecoder()
    const pieces = 2048
    const frames = [...decoder.push('data: ')]
    for (let i = 0; i < pieces; i++) frames.push(...decoder.push(piece))
    frames.push(...decoder.push('\n\n'))
    expect(frames).toEqual([{ data: piece.repeat(pieces) }])
    expect(offered).toBeLessThan(3 * pieces * piece.length)
  })

  it('tells what the frame under way holds: its data lines and the line still open', () => {
    const decoder = new SseDecoder()
    decoder.push(`data: ${'x'.repeat(10)}\ndata: ${'y'.repeat(5)}\n`)
    expect(decoder.heldChars).toBe(16)
    decoder.push('data: zz')
    expect(decoder.heldChars).toBe(16 + 8)
    decoder.push('z\n\n')
    expect(decoder.heldChars).toBe(0)
  })
})

afterEach(() => {
  vi.restoreAllMocks()
})
