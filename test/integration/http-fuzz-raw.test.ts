import { connect } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { startEngine } from '../support/engine-harness.ts'
import { type RunningServer, serveApp } from '../support/http-server.ts'

/**
 * Invariant 8 below the fetch API: raw bytes over a socket (invalid UTF-8 in paths and headers,
 * bodies that lie about their length) still get a 4xx status line, and nothing hangs.
 */
const TIMEOUT_MS = 10_000
const KEY = 'fuzz-key-0123456789abcdef'

let engine: Awaited<ReturnType<typeof startEngine>>
let server: RunningServer
let sessionId = ''

beforeAll(async () => {
  engine = await startEngine()
  const app = createApp({
    api: engine.service,
    auth: { keys: [{ key: KEY, tenant: 'fuzz' }] },
    limits: { maxBytes: 1024 * 1024, timeoutMs: 500 },
    log: () => {},
  })
  server = await serveApp(app)
  sessionId = (await engine.service.createSession('fuzz', {})).session_id
})
afterAll(async () => {
  await server.close()
  engine.mock.assertDone()
  await engine.close()
})

/** Raw HTTP/1.1 over a socket: bytes no fetch client would send. */
function rawRequest(bytes: Uint8Array | string, endAfterWrite = false): Promise<string> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1')
    let answer = ''
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within ${TIMEOUT_MS} ms`))
    }, TIMEOUT_MS)
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1')
      if (/\r\n\r\n/.test(answer)) {
        clearTimeout(timer)
        socket.destroy()
        resolve(answer)
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearTimeout(timer)
      resolve(answer)
    })
    socket.write(bytes)
    if (endAfterWrite) socket.end()
  })
}

describe('HTTP fuzz over raw sockets', () => {
  const head = (line: string, headers: string[]) =>
    `${line}\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${KEY}\r\nconnection: close\r\n${headers.join('\r\n')}${headers.length ? '\r\n' : ''}\r\n`

  it('answers invalid UTF-8 in paths and headers, truncated and lying bodies with a 4xx', async () => {
    const latin = (text: string) => Buffer.from(text, 'latin1')
    const cases: [string, Uint8Array | string, boolean][] = [
      ['invalid UTF-8 in the id', latin(head('GET /v1/sessions/\xff\xfe HTTP/1.1', [])), false],
      ['invalid UTF-8 encoded in the id', head('GET /v1/sessions/%ff%fe HTTP/1.1', []), false],
      ['raw traversal', head(`GET /v1/sessions/../../${sessionId} HTTP/1.1`, []), false],
      [
        'invalid UTF-8 in Idempotency-Key',
        latin(
          `${head(`POST /v1/sessions/${sessionId}/turns HTTP/1.1`, [
            'idempotency-key: \xe9\xff',
            'content-length: 2',
            'content-type: application/json',
          ])}{}`,
        ),
        false,
      ],
      [
        'invalid UTF-8 body, chunked',
        Buffer.concat([
          Buffer.from(
            head('POST /v1/sessions HTTP/1.1', [
              'transfer-encoding: chunked',
              'content-type: application/json',
            ]),
          ),
          Buffer.from('4\r\n'),
          Buffer.from([0x7b, 0x22, 0xff, 0x22]),
          Buffer.from('\r\n0\r\n\r\n'),
        ]),
        false,
      ],
      [
        'body shorter than Content-Length, then silence',
        `${head('POST /v1/sessions HTTP/1.1', [
          'content-length: 100',
          'content-type: application/json',
        ])}{"wor`,
        false,
      ],
      [
        'oversize Content-Length, no body',
        head('POST /v1/exec HTTP/1.1', [
          `content-length: ${50 * 1024 * 1024}`,
          'content-type: application/json',
        ]),
        false,
      ],
      [
        'garbage Content-Length',
        head('POST /v1/sessions HTTP/1.1', ['content-length: 12abc']),
        false,
      ],
      ['header line without colon', `GET /healthz HTTP/1.1\r\nhost: x\r\nbroken\r\n\r\n`, false],
      [
        'NUL in a header value',
        head('GET /v1/sessions HTTP/1.1', ['accept: text/\u0000event-stream']),
        false,
      ],
    ]
    for (const [name, bytes, end] of cases) {
      const answer = await rawRequest(bytes, end)
      expect(answer, name).toMatch(/^HTTP\/1\.1 4\d\d /)
    }
  })
})
