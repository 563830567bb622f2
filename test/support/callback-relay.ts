import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** One delivery the runner made through the relay, and the answer of the instance it reached. */
export interface RelayedDelivery {
  /** The signed message exactly as the runner sent it (body and Standard Webhooks headers). */
  body: string
  headers: Record<string, string>
  /** The base URL of the instance it went to. */
  to: string
  status: number
  answer: string
}

export interface CallbackRelay {
  /** Give this to the runner as its callback URL. */
  url: string
  /** The instance (base URL) that receives the next deliveries. */
  target: string | undefined
  readonly deliveries: RelayedDelivery[]
  close(): Promise<void>
}

const SIGNED_HEADERS = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature']

/**
 * A pass-through between the runner and a chosen server instance, like a load balancer that
 * picks one: every exit callback is forwarded untouched to `target`'s `/v1/runner/callback`,
 * and its answer goes back to the runner. Each delivery is recorded, so a test can send the same
 * signed message to another instance afterwards (a replay).
 */
export async function startCallbackRelay(): Promise<CallbackRelay> {
  const deliveries: RelayedDelivery[] = []
  const relay: CallbackRelay = {
    url: '',
    target: undefined,
    deliveries,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const headers: Record<string, string> = {}
      for (const name of SIGNED_HEADERS) {
        const value = req.headers[name]
        if (typeof value === 'string') headers[name] = value
      }
      const to = relay.target
      if (to === undefined) {
        res.writeHead(503).end('no target instance')
        return
      }
      try {
        const answer = await fetch(`${to}/v1/runner/callback`, { method: 'POST', headers, body })
        const text = await answer.text()
        deliveries.push({ body, headers, to, status: answer.status, answer: text })
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text)
      } catch (error) {
        deliveries.push({ body, headers, to, status: 502, answer: String(error) })
        res.writeHead(502).end()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  relay.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/runner/callback`
  return relay
}
