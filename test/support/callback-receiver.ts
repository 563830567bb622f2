import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ExecExitCallback } from '../../src/contract/exec-exit-callback.ts'
import { readExitCallback } from '../../src/contract/runner-callback.ts'
import { MemoryReplayGuard } from '../../src/contract/runner-signature.ts'
import { standardWebhookValid } from './webhook-signature-check.ts'

export interface ReceivedCallback {
  status: number
  message?: string
  callback?: ExecExitCallback
  /** Checked independently with node:crypto, as a customer's receiver would. */
  hmacValid: boolean
}

/**
 * A real receiver of the runner's exit notices on 127.0.0.1: verifies them with
 * `readExitCallback` (signature, window, replay) and answers 204, or 401/400. `failFirst` answers
 * 503 to the first valid deliveries of every exec session, to exercise the runner's retries.
 */
export async function startCallbackReceiver(secret: string, options: { failFirst?: number } = {}) {
  const received: ReceivedCallback[] = []
  const replay = new MemoryReplayGuard()
  const failed = new Map<string, number>()
  const waiters = new Set<() => void>()
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const hmacValid = standardWebhookValid(secret, req.headers, body)
      const headers = new Headers()
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v)
      const check = await readExitCallback({ secret, body, headers, nowMs: Date.now(), replay })
      let status: number = check.ok ? 204 : check.status
      if (check.ok) {
        const id = check.callback.exec_session_id
        const count = failed.get(id) ?? 0
        if (count < (options.failFirst ?? 0)) {
          failed.set(id, count + 1)
          status = 503
        }
      }
      received.push({
        status,
        hmacValid,
        ...(check.ok ? { callback: check.callback } : { message: check.message }),
      })
      res.writeHead(status).end()
      for (const wake of [...waiters]) wake()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1/runner/callback`,
    received,
    /** Resolves with the first accepted notice for this exec session. */
    accepted(execSessionId: string, timeoutMs = 15_000): Promise<ReceivedCallback> {
      const find = () =>
        received.find((r) => r.status === 204 && r.callback?.exec_session_id === execSessionId)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check)
          reject(
            new Error(`no accepted callback for ${execSessionId}: ${JSON.stringify(received)}`),
          )
        }, timeoutMs)
        const check = () => {
          const hit = find()
          if (!hit) return
          clearTimeout(timer)
          waiters.delete(check)
          resolve(hit)
        }
        waiters.add(check)
        check()
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
