import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
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
 * A customer's hook endpoint on 127.0.0.1: verifies the Standard Webhooks signature with the
 * shared secret and answers 401 when it does not match, records
 * every delivery, and otherwise answers with `reply(hook)` (default: 200 `{}`).
 */
export async function startHookReceiver(secret: string) {
  const received: ReceivedHook[] = []
  let reply: (hook: ReceivedHook) => HookReply = () => ({ body: '{}' })
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const signatureValid = standardWebhookValid(secret, req.headers, raw)
      let body: Record<string, unknown> = {}
      try {
        body = JSON.parse(raw) as Record<string, unknown>
      } catch {
        // recorded as received; the test decides whether that is a failure
      }
      const hook: ReceivedHook = {
        path: req.url ?? '',
        raw,
        body,
        headers: req.headers,
        signatureValid,
      }
      received.push(hook)
      const answer = signatureValid ? reply(hook) : { status: 401, body: 'bad signature' }
      if ('destroy' in answer && answer.destroy) {
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
    received,
    setReply(fn: (hook: ReceivedHook) => HookReply) {
      reply = fn
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A 127.0.0.1 port with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
