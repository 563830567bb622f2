import { createHmac, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { standardWebhookValid } from '../../test/support/webhook-signature-check.ts'

/**
 * The tool endpoint of bench/turn-cost.ts: like the test suite's receiver, it verifies every
 * call's signature and answers with an echo of the arguments. It accepts both signing schemes
 * Turnline has used — Standard Webhooks (`webhook-signature`, current) and the earlier
 * `turnline-signature: v1=<hex HMAC of "<timestamp>.<body>">` — so that revisions from before
 * the switch can run in the same comparison (`--before`). A call with neither is answered 401.
 */
export async function startBenchToolReceiver(secret: string) {
  let valid = 0
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      const ok =
        standardWebhookValid(secret, req.headers, raw) || legacyValid(secret, req.headers, raw)
      if (!ok) {
        res.writeHead(401, { 'content-type': 'text/plain' })
        res.end('bad signature')
        return
      }
      valid += 1
      const body = JSON.parse(raw) as { arguments?: unknown }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ echo: body.arguments }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/tool`,
    host: `127.0.0.1:${port}`,
    /** Calls answered with a valid signature so far. */
    validCalls: () => valid,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function legacyValid(secret: string, headers: IncomingHttpHeaders, raw: string): boolean {
  const timestamp = String(headers['turnline-timestamp'] ?? '')
  const given = String(headers['turnline-signature'] ?? '').replace(/^v1=/, '')
  const expected = createHmac('sha256', secret).update(`${timestamp}.${raw}`).digest('hex')
  return (
    timestamp !== '' &&
    given.length === expected.length &&
    timingSafeEqual(Buffer.from(given), Buffer.from(expected))
  )
}
