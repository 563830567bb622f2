import { vi } from 'vitest'
import { sha256Hex } from '../../src/shared/sha256-hex.ts'
import type { AppInstance } from './app-instance.ts'
import { signMessage } from './signed-callback.ts'

/** One event of the `triage` webhook (webhookDeployment), as its sender delivers it. */
export interface Delivery {
  /** Its `webhook-id`. */
  id: string
  /** The session its run gets (`wh-triage-<digest of the id>`). */
  sessionId: string
  /** The same bytes every time — the same id, timestamp and signature — as captured on the wire. */
  send(on: AppInstance): Promise<Response>
  /** The same event signed anew at `timestamp` (epoch seconds), as a sender's retry is. */
  resign(timestamp: number): { send(on: AppInstance): Promise<Response> }
}

/** A delivery signed with the hook's `secret` at `timestamp` (epoch seconds, default now). */
export async function webhookDelivery(
  secret: string,
  body = '{"event":"push"}',
  timestamp = Math.floor(Date.now() / 1000),
): Promise<Delivery> {
  const id = `msg_${crypto.randomUUID()}`
  const signedAt = (seconds: number) => {
    const signed = signMessage(secret, body, id, seconds)
    return {
      send: (on: AppInstance) =>
        fetch(`${on.url}/v1/webhooks/triage`, { method: 'POST', ...signed }),
    }
  }
  return {
    id,
    sessionId: `wh-triage-${(await sha256Hex(id)).slice(0, 24)}`,
    send: signedAt(timestamp).send,
    resign: signedAt,
  }
}

/** The keys the test writes of a delivery session on S3 (moto's paths, bucket-relative). */
export const sessionKeys = {
  pointer: (sid: string) => `/acme/.turnline/sessions/${sid}.json`,
  batch: (n: number) => (sid: string) =>
    `/.vtcode/sessions/${sid}/log/${String(n).padStart(10, '0')}.json`,
  manifest: (sid: string) => `/.vtcode/sessions/${sid}/manifest.json`,
  /** The folder of the session's background work records (each named by its work id). */
  pendingWork: (sid: string) => `/.turnline/work/pending/acme/${sid}/`,
}

/**
 * Sends until the answer is not 409 session_busy (the lease a dead instance's turn keeps, which
 * lapses within `leaseMs`), as a sender retries.
 */
export async function sendUntilFree(
  send: () => Promise<Response>,
  leaseMs: number,
): Promise<Response> {
  return vi.waitUntil(
    async () => {
      const answer = await send()
      if (answer.status !== 409) return answer
      const body = (await answer.clone().json()) as { error: { code: string } }
      return body.error.code === 'session_busy' ? undefined : answer
    },
    { timeout: leaseMs * 5, interval: 250 },
  )
}
