import type { CallbackDelivery, DeliveryAttempt } from '../../contract/callback-delivery.ts'
import { standardWebhookHeaders } from '../../contract/standard-webhooks.ts'
import { EgressRefused, transportFailureText } from '../../contract/transport-failure.ts'
import type { TimerClock } from '../../ports/clock.ts'
import { backoffMs } from '../../shared/backoff.ts'
import type { CallbackOutbox, StoredDelivery } from './callback-outbox.ts'
import { type CallbackPolicy, callbackUrlProblem } from './callback-policy.ts'

export interface CallbackContext {
  outbox: CallbackOutbox
  policy: CallbackPolicy
  clock: TimerClock
  log: (entry: Record<string, unknown>) => void
}

/** What became of one delivery when the sender looked at it. */
export type SendOutcome =
  | { kind: 'final' }
  /** Pending: due at this epoch ms (an attempt failed, not due yet, or another instance holds it). */
  | { kind: 'pending'; dueAt: number }

type AttemptResult =
  | { ok: true; attempt: DeliveryAttempt }
  | { ok: false; attempt: DeliveryAttempt; final?: string }

const iso = (ms: number) => new Date(ms).toISOString()

/** One POST of the notice, signed for this attempt; never throws. */
async function attempt(
  ctx: CallbackContext,
  tenant: string,
  record: CallbackDelivery,
): Promise<AttemptResult> {
  const started = ctx.clock.now()
  const done = (fields: Partial<DeliveryAttempt>) => ({
    at: iso(started),
    ...fields,
    duration_ms: Math.max(0, Math.round(ctx.clock.now() - started)),
  })
  const problem = callbackUrlProblem(record.url, ctx.policy)
  if (problem) return { ok: false, attempt: done({ error: problem }), final: problem }
  const controller = new AbortController()
  const cancel = ctx.clock.setTimer(ctx.policy.timeoutMs, () => controller.abort())
  try {
    const headers = standardWebhookHeaders({
      secret: ctx.policy.secretFor(tenant),
      id: record.id,
      body: record.body,
      nowMs: started,
    })
    const response = await ctx.policy.fetch(record.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Turnline-Callbacks',
        ...headers,
      },
      body: record.body,
      redirect: 'manual',
      signal: controller.signal,
    })
    await response.body?.cancel().catch(() => undefined)
    const answered = done({ status_code: response.status })
    return response.status >= 200 && response.status < 300
      ? { ok: true, attempt: answered }
      : { ok: false, attempt: answered }
  } catch (error) {
    if (error instanceof EgressRefused) {
      const reason = `refused: ${error.message}`
      return { ok: false, attempt: done({ error: reason }), final: reason }
    }
    const text = controller.signal.aborted
      ? `no answer within ${ctx.policy.timeoutMs} ms`
      : transportFailureText(error)
    return { ok: false, attempt: done({ error: text }) }
  } finally {
    cancel()
  }
}

/** The record after an attempt: delivered, given up, or due again after the backoff. */
function settled(ctx: CallbackContext, record: CallbackDelivery, result: AttemptResult) {
  const now = ctx.clock.now()
  const { claim: _claim, next_attempt_at: _next, ...rest } = record
  const attempts = [...record.attempts, result.attempt]
  if (result.ok) {
    return { ...rest, attempts, state: 'delivered' as const, finished_at: iso(now) }
  }
  const { retry } = ctx.policy
  const nextAt = now + backoffMs(attempts.length - 1, { ...retry, jitter: 'spread' })
  const giveUpAt = Date.parse(record.created_at) + retry.giveUpAfterMs
  const final =
    result.final ?? (nextAt > giveUpAt ? `gave up after ${attempts.length} attempts` : undefined)
  if (final)
    return { ...rest, attempts, state: 'failed' as const, finished_at: iso(now), reason: final }
  return { ...rest, attempts, state: 'pending' as const, next_attempt_at: iso(nextAt) }
}

/**
 * Delivers one record if it is due and nobody holds it: claims it (compare-and-swap, a lease of
 * the attempt's deadline plus a margin, so two instances never send it at once), sends, and
 * records the attempt. A claim lost meanwhile (the lease ran out and another instance took it)
 * leaves the record to that instance: at-least-once, with the same `webhook-id`.
 */
export async function sendDue(
  ctx: CallbackContext,
  tenant: string,
  stored: StoredDelivery,
): Promise<SendOutcome> {
  const { record } = stored
  if (record.state !== 'pending') return { kind: 'final' }
  const now = ctx.clock.now()
  const due = Date.parse(record.next_attempt_at ?? record.created_at)
  const held = record.claim ? Date.parse(record.claim.until) : 0
  if (due > now || held > now) return { kind: 'pending', dueAt: Math.max(due, held) }
  const until = now + ctx.policy.timeoutMs + ctx.policy.claimMarginMs
  const claimed: CallbackDelivery = {
    ...record,
    claim: { owner: ctx.policy.owner, until: iso(until) },
  }
  const etag = await ctx.outbox.replace(stored.key, claimed, stored.etag)
  if (etag === false) return { kind: 'pending', dueAt: now }
  const result = await attempt(ctx, tenant, record)
  const next = settled(ctx, claimed, result)
  if ((await ctx.outbox.replace(stored.key, next, etag)) === false) {
    ctx.log({
      level: 'warn',
      msg: 'callback claim lost during an attempt',
      id: record.id,
      key: stored.key,
    })
    return { kind: 'pending', dueAt: ctx.clock.now() }
  }
  ctx.log({
    msg: 'callback attempt',
    id: record.id,
    type: record.type,
    state: next.state,
    ...(result.attempt.status_code === undefined ? {} : { status: result.attempt.status_code }),
    ...(result.attempt.error === undefined ? {} : { error: result.attempt.error }),
  })
  return next.state === 'pending'
    ? { kind: 'pending', dueAt: Date.parse(next.next_attempt_at ?? iso(now)) }
    : { kind: 'final' }
}
