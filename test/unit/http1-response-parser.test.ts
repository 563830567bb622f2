import { describe, expect, it } from 'vitest'
import {
  ProtocolError,
  type ResponseHead,
  ResponseParser,
} from '../../adapters/node-http/http1-response-parser.ts'

/** What the parser made of `wire` fed in pieces of `size` bytes (and the close, if asked). */
function parse(wire: string, size: number, options: { head?: boolean; close?: boolean } = {}) {
  const seen: { head?: ResponseHead; body: string; ended: boolean; interim: number } = {
    body: '',
    ended: false,
    interim: 0,
  }
  const parser = new ResponseParser(options.head ?? false, {
    head: (head) => {
      seen.head = head
    },
    data: (chunk) => {
      seen.body += chunk.toString('latin1')
    },
    end: () => {
      seen.ended = true
    },
  })
  const bytes = Buffer.from(wire, 'latin1')
  for (let at = 0; at < bytes.length; at += size) parser.push(bytes.subarray(at, at + size))
  if (options.close) parser.closed()
  return { ...seen, complete: parser.complete, trailing: parser.trailing, parser }
}

/** Every way of cutting `wire` into equal pieces gives the same answer. */
function everyCut(wire: string, options: { head?: boolean; close?: boolean } = {}) {
  const results = []
  for (let size = 1; size <= wire.length; size++) results.push(parse(wire, size, options))
  const [first] = results
  for (const result of results) {
    expect(result.body).toBe(first?.body)
    expect(result.ended).toBe(first?.ended)
    expect(result.head?.status).toBe(first?.head?.status)
    expect(result.head?.rawHeaders).toEqual(first?.head?.rawHeaders)
  }
  return first as (typeof results)[number]
}

const chunked =
  'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n' +
  'b\r\ndata: one\n\n\r\n' +
  '1A;name=value\r\nabcdefghijklmnopqrstuvwxyz\r\n' +
  '0\r\nX-Trailer: t\r\n\r\n'

describe('ResponseParser', () => {
  it('reads a chunked answer, extensions and trailers dropped, however the bytes are cut', () => {
    const result = everyCut(chunked)
    expect(result.head?.status).toBe(200)
    expect(result.head?.statusText).toBe('OK')
    expect(result.head?.header('content-type')).toBe('text/event-stream')
    expect(result.head?.keepAlive).toBe(true)
    expect(result.body).toBe('data: one\n\nabcdefghijklmnopqrstuvwxyz')
    expect(result.ended).toBe(true)
    expect(result.trailing).toBe(false)
  })

  it('reads a body of a Content-Length, and tells bytes after its end', () => {
    const wire =
      'HTTP/1.1 201 Created\r\ncontent-length: 5\r\nX-Multi: a\r\nx-multi: b\r\n\r\nhello'
    const result = everyCut(wire)
    expect(result.body).toBe('hello')
    expect(result.ended).toBe(true)
    expect(result.head?.header('x-multi')).toBe('a, b')
    expect(result.head?.rawHeaders).toEqual(['content-length', '5', 'X-Multi', 'a', 'x-multi', 'b'])
    expect(parse(`${wire}extra`, 1000).trailing).toBe(true)
  })

  it('reads no body for HEAD, 204 and 304, skips interim answers, and reads to the close without a length', () => {
    const head = parse('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n', 1000, { head: true })
    expect(head.ended).toBe(true)
    expect(head.body).toBe('')
    expect(parse('HTTP/1.1 204 No Content\r\ncontent-length: 3\r\n\r\n', 1000).ended).toBe(true)
    const interim = everyCut(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok',
    )
    expect(interim.head?.status).toBe(200)
    expect(interim.body).toBe('ok')
    const open = 'HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end'
    const unclosed = parse(open, 4)
    expect(unclosed.ended).toBe(false)
    expect(unclosed.parser.untilClose).toBe(true)
    const closed = everyCut(open, { close: true })
    expect(closed.body).toBe('until the end')
    expect(closed.ended).toBe(true)
    expect(closed.head?.keepAlive).toBe(false)
  })

  it('keeps an HTTP/1.0 connection only when the answer asks to', () => {
    const plain = parse('HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n', 1000)
    expect(plain.head?.keepAlive).toBe(false)
    const kept = parse(
      'HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n',
      1000,
    )
    expect(kept.head?.keepAlive).toBe(true)
  })

  it('refuses what HTTP/1.1 refuses, and an answer cut short', () => {
    const refused = [
      'HTTP/2 200 OK\r\n\r\n',
      'HTTP/1.1 20 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\nbad header\r\n\r\n',
      'HTTP/1.1 200 OK\r\nx: a\r\n folded\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n',
      `HTTP/1.1 200 OK\r\nx: ${'a'.repeat(17 * 1024)}`,
    ]
    for (const wire of refused) {
      expect(() => parse(wire, 7), wire.slice(0, 60)).toThrow(ProtocolError)
    }
    const short = 'HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'
    expect(() => parse(short, 1000, { close: true })).toThrow('other side closed')
    expect(() => parse(chunked.slice(0, 100), 1000, { close: true })).toThrow(ProtocolError)
  })
})
