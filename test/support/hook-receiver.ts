import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import { standardWebhookValid } from './webhook-signature-check.ts'

export interface ReceivedHook {
  path: string
  raw: string
  body: Record<string, unknown>
  headers: Record<string, string | string[] | undefined>
  signatureValid: boolean
}

export interface HookReply {
  status?: number
  body?: string
  delayMs?: number
  /** Answer only once this settles (the test decides when: see gate.ts). */
  hold?: Promise<unknown>
  headers?: Record<string, string>
  /** Drop the connection without an answer (a receiver that fails). */
  destroy?: boolean
}

/**
 * What a customer's hook endpoint does with a delivery: verifies the Standard Webhooks signature
 * with the shared secret and answers 401 when it does not match, records every delivery, and
 * otherwise answers with `reply(hook)` (default: 200 `{}`).
 */
function hookRecorder(secret: string) {
  const received: ReceivedHook[] = []
  let reply: (hook: ReceivedHook) => HookReply = () => ({ body: '{}' })
  return {
    received,
    setReply(fn: (hook: ReceivedHook) => HookReply) {
      reply = fn
    },
    receive(path: string, headers: ReceivedHook['headers'], raw: string): HookReply {
      const signatureValid = standardWebhookValid(secret, headers, raw)
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(raw) as Record<string, unknown>
      } catch {
        // recorded as received; the test decides whether that is a failure
      }
      const hook: ReceivedHook = { path, raw, body, headers, signatureValid }
      received.push(hook)
      return signatureValid ? reply(hook) : { status: 401, body: 'bad signature' }
    },
  }
}

/** A real HTTP hook endpoint on 127.0.0.1 (see `hookRecorder`). */
export async function startHookReceiver(secret: string) {
  const recorder = hookRecorder(secret)
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const answer = recorder.receive(req.url ?? '', req.headers, raw)
      if (answer.destroy) {
        res.socket?.destroy()
        return
      }
      const send = () => {
        if (res.destroyed) return
        res.writeHead(answer.status ?? 200, {
          'content-type': 'application/json',
          ...answer.headers,
        })
        res.end(answer.body ?? '')
      }
      const timer = setTimeout(() => {
        if (answer.hold) void answer.hold.then(send)
        else send()
      }, answer.delayMs ?? 0)
      res.on('close', () => clearTimeout(timer))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    host: `127.0.0.1:${port}`,
    received: recorder.received,
    setReply: recorder.setReply,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * The same endpoint answered in-process, for the unit tier: `fetch` serves the requests for
 * `origin` (give it to the engine's HTTP policy, which hooks share with HTTP tools); a reply
 * held past the caller's abort ends as the caller's timeout, as over a socket.
 */
export function inProcessHookReceiver(secret: string, origin = 'http://127.0.0.1:8') {
  const recorder = hookRecorder(secret)
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input))
    const headers = Object.fromEntries(new Headers(init?.headers).entries())
    const answer = recorder.receive(
      `${url.pathname}${url.search}`,
      headers,
      String(init?.body ?? ''),
    )
    const signal = init?.signal
    const aborted = new Promise<never>((_, reject) => {
      if (signal?.aborted) reject(signal.reason)
      signal?.addEventListener('abort', () => reject(signal.reason), { once: true })
    })
    if (answer.delayMs)
      throw new Error('in-process hook receiver: hold the reply (hold), no delayMs')
    if (answer.destroy) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } })
    if (answer.hold) await Promise.race([aborted, answer.hold])
    signal?.throwIfAborted()
    return new Response(answer.body ?? '', {
      status: answer.status ?? 200,
      headers: { 'content-type': 'application/json', ...answer.headers },
    })
  }
  return {
    origin,
    url: (path: string) => `${origin}${path}`,
    host: new URL(origin).host,
    received: recorder.received,
    setReply: recorder.setReply,
    fetch,
    close: async (): Promise<void> => {},
  }
}

export type InProcessHookReceiver = ReturnType<typeof inProcessHookReceiver>

/** A 127.0.0.1 port with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * The listing entry (`GET …/artifacts`) of `answer`, kept whole from the first `session_start`
 * hook, named `boot`, as a session was created or forked: in batch 0, seq 0, no turn.
 */
export function keptStartAnswer(answer: string) {
  return {
    kind: 'hook_answer',
    seq: 0,
    event: 'session_start',
    hook: 'boot',
    hook_index: 0,
    hook_type: 'http',
    artifact_id: expect.stringMatching(/^out_[0-9a-f]{32}$/),
    size: new TextEncoder().encode(answer).length,
    lines: answer.split('\n').length,
  }
}
