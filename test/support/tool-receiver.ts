import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { standardWebhookValid } from './webhook-signature-check.ts'

export interface ReceivedCall {
  body: {
    tool: string
    arguments: Record<string, unknown>
    session_id: string
    tool_call_id: string
  }
  /** The request body exactly as received. */
  raw: string
  headers: Record<string, string | string[] | undefined>
  signatureValid: boolean
}

export type ToolReply = (call: ReceivedCall) => {
  status?: number
  body: string
  delayMs?: number
  /** Send the body's Content-Length (else it goes chunked, its length unknown in advance). */
  contentLength?: boolean
}

/**
 * What a customer's tool endpoint does with a call: verifies the HMAC signature as a real
 * receiver would, records the call, and answers with `reply(call)` (default: echo).
 */
function toolCallRecorder(secret: string) {
  const calls: ReceivedCall[] = []
  let reply: ToolReply = (call) => ({ body: JSON.stringify({ echo: call.body.arguments }) })
  return {
    calls,
    setReply(fn: ToolReply) {
      reply = fn
    },
    receive(headers: IncomingHttpHeaders, raw: string) {
      const signatureValid = standardWebhookValid(secret, headers, raw)
      const call: ReceivedCall = { body: JSON.parse(raw), raw, headers, signatureValid }
      calls.push(call)
      return signatureValid ? reply(call) : { status: 401, body: 'bad signature' }
    },
  }
}

/** A real HTTP endpoint for session-defined tools (see `toolCallRecorder`). */
export async function startToolReceiver(secret: string) {
  const recorder = toolCallRecorder(secret)
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const answer = recorder.receive(req.headers, Buffer.concat(chunks).toString('utf8'))
      setTimeout(() => {
        res.writeHead(answer.status ?? 200, {
          'content-type': 'application/json',
          ...(answer.contentLength ? { 'content-length': Buffer.byteLength(answer.body) } : {}),
        })
        res.end(answer.body)
      }, answer.delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/tool`,
    host: `127.0.0.1:${port}`,
    calls: recorder.calls,
    setReply: recorder.setReply,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * The same endpoint answered in-process: `fetch` goes in the engine's HTTP tool policy, so the
 * unit tier calls tools without a socket (the request is signed and checked all the same).
 */
export function inProcessToolReceiver(secret: string) {
  const recorder = toolCallRecorder(secret)
  const url = 'http://127.0.0.1:9/tool'
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const target = input instanceof Request ? input.url : String(input)
    // Another origin has nothing listening: refused, as undici reports it.
    if (new URL(target).origin !== new URL(url).origin) {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } })
    }
    if (target !== url) return new Response('no such tool endpoint', { status: 404 })
    const headers = Object.fromEntries(new Headers(init?.headers).entries())
    const answer = recorder.receive(headers, String(init?.body ?? ''))
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs))
    init?.signal?.throwIfAborted()
    return new Response(answer.body, {
      status: answer.status ?? 200,
      headers: { 'content-type': 'application/json' },
    })
  }
  return { url, host: '127.0.0.1:9', calls: recorder.calls, setReply: recorder.setReply, fetch }
}

export type InProcessToolReceiver = ReturnType<typeof inProcessToolReceiver>
