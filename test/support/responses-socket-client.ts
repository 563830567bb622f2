import { request as httpRequest } from 'node:http'
import { WebSocket } from 'undici'

/**
 * A client of the Open Responses WebSocket mode for the tests: a real WebSocket (undici's, the
 * one Node's global WebSocket is, with the API key sent as a header on the upgrade as
 * server-side clients do), each message parsed as JSON and read in order; `turn()` reads one
 * response's events up to its terminal event, or the error event that answered its request.
 */
type Json = Record<string, unknown>

export interface SocketTurn {
  events: Json[]
  /** The last event: `response.completed` / `.incomplete` / `.failed`, or `error`. */
  last: Json
  /** The response resource of the terminal event (undefined after an `error`). */
  response?: Json & { id: string; status: string; output: Json[] }
}

export interface ResponsesSocketClient {
  send(event: unknown): void
  sendText(text: string): void
  /** The next message, parsed (rejects when the socket closes first). */
  next(): Promise<Json>
  /** One response: its events up to its terminal event, or the error event. */
  turn(): Promise<SocketTurn>
  /** Resolves with the close code and reason once the socket closed. */
  closed: Promise<{ code: number; reason: string }>
  close(): void
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/** `http://host:port` → `ws://host:port/v1/responses`. */
export function socketUrl(base: string): string {
  return `${base.replace(/^http/, 'ws').replace(/\/$/, '')}/v1/responses`
}

export async function openResponsesSocket(
  url: string,
  headers: Record<string, string> = {},
): Promise<ResponsesSocketClient> {
  const ws = new WebSocket(url, { headers })
  const messages: Json[] = []
  const waiters: { resolve: (value: Json) => void; reject: (error: Error) => void }[] = []
  let ended: Error | undefined
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener('close', (event) => {
      ended = new Error(`socket closed (${event.code} ${event.reason})`)
      for (const waiter of waiters.splice(0)) waiter.reject(ended)
      resolve({ code: event.code, reason: event.reason })
    })
  })
  ws.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as Json
    const waiter = waiters.shift()
    if (waiter) waiter.resolve(message)
    else messages.push(message)
  })
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve())
    ws.addEventListener('error', () => reject(new Error(`cannot open ${url}`)))
  })
  const next = () =>
    new Promise<Json>((resolve, reject) => {
      const queued = messages.shift()
      if (queued) resolve(queued)
      else if (ended) reject(ended)
      else waiters.push({ resolve, reject })
    })
  return {
    send: (event) => ws.send(JSON.stringify(event)),
    sendText: (text) => ws.send(text),
    next,
    async turn() {
      const events: Json[] = []
      for (;;) {
        const event = await next()
        events.push(event)
        const type = String(event.type)
        if (type === 'error') return { events, last: event }
        if (TERMINAL.has(type)) {
          return { events, last: event, response: event.response as SocketTurn['response'] }
        }
      }
    },
    closed,
    close: () => ws.close(1000, 'done'),
  }
}

/**
 * The HTTP answer to an upgrade request that is refused (no WebSocket is opened): its status
 * and body, read with a plain HTTP client since a WebSocket client shows only that it failed.
 */
export function refusedUpgrade(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    })
    req.on('response', (res) => {
      let body = ''
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString()
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on('upgrade', (_res, socket) => {
      socket.destroy()
      reject(new Error('the upgrade was accepted'))
    })
    req.on('error', reject)
    req.end()
  })
}
