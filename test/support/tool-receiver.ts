import { createServer } from 'node:http'
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

/**
 * A real HTTP endpoint for session-defined tools: verifies the HMAC signature as a customer's
 * receiver would, records every call, and answers with `reply(call)` (default: echo).
 */
export async function startToolReceiver(secret: string) {
  const calls: ReceivedCall[] = []
  let reply: (call: ReceivedCall) => { status?: number; body: string; delayMs?: number } = (
    call,
  ) => ({
    body: JSON.stringify({ echo: call.body.arguments }),
  })
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const signatureValid = standardWebhookValid(secret, req.headers, raw)
      const call: ReceivedCall = {
        body: JSON.parse(raw),
        raw,
        headers: req.headers,
        signatureValid,
      }
      calls.push(call)
      const answer = signatureValid ? reply(call) : { status: 401, body: 'bad signature' }
      setTimeout(() => {
        res.writeHead(answer.status ?? 200, { 'content-type': 'application/json' })
        res.end(answer.body)
      }, answer.delayMs ?? 0)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/tool`,
    host: `127.0.0.1:${port}`,
    calls,
    setReply(fn: typeof reply) {
      reply = fn
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
