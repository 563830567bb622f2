import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import type { SlotVerdict, TenantLimiter } from '../../src/ports/tenant-limiter.ts'
import { stampedLeaseId } from '../../src/shared/held-retry-after.ts'

/**
 * Followed streams (`GET …/events?follow=1`, `GET /v1/responses/{id}` streaming a response that
 * still runs) one tenant may hold open: on one server process, and, with the deployment's
 * limiter, on all its instances together. Each holds a connection (on Lambda a whole execution
 * environment) and reads the store every poll for up to the follow limit, so without a bound
 * one tenant's streams could use up what every tenant shares (DESIGN.md §5, invariant 10).
 */
export const MAX_FOLLOWED_STREAMS_PER_TENANT = 64

/** A stream's slot outlives the longest it may stay open by this much (clocks, a late end). */
const SLOT_GRACE_MS = 10_000

export interface FollowedStreamsOptions {
  max?: number
  /**
   * The deployment's per-tenant slots (`follows`), in the coordinator's Redis where there is one:
   * a stream takes a slot before it is answered and gives it back when it ends; a crashed
   * instance's slots lapse `streamMs` + 10 s after they were taken. Counters that cannot be
   * reached let the stream through (logged), bounded in this process only.
   */
  limiter?: Pick<TenantLimiter, 'acquireSlot' | 'releaseSlot'> | undefined
  /** The longest a followed stream stays open (the follow limit). */
  streamMs?: number
  /** A slot's release that failed (it lapses on its own). */
  log?: ((entry: Record<string, unknown>) => void) | undefined
  /** The random part of a slot's id. */
  randomId?: () => string
}

/** The followed streams each tenant holds open, in this process and (with a limiter) in all. */
export class FollowedStreams {
  readonly #held = new Map<string, number>()
  readonly max: number
  readonly #options: FollowedStreamsOptions

  constructor(options: FollowedStreamsOptions = {}) {
    this.max = options.max ?? MAX_FOLLOWED_STREAMS_PER_TENANT
    this.#options = options
  }

  /**
   * Holds `body` as one of `tenant`'s followed streams until it ends, fails or is cancelled;
   * 429 `rate_limited` when the tenant holds `max` already, here or in all instances.
   */
  async hold(
    tenant: string,
    body: ReadableStream<Uint8Array>,
  ): Promise<ReadableStream<Uint8Array>> {
    const held = this.#held.get(tenant) ?? 0
    if (held >= this.max) throw this.#full(1)
    this.#held.set(tenant, held + 1)
    const leave = () => {
      const left = (this.#held.get(tenant) ?? 1) - 1
      if (left > 0) this.#held.set(tenant, left)
      else this.#held.delete(tenant)
    }
    let slot: { release(): void } | undefined
    try {
      slot = await this.#slot(tenant)
    } catch (error) {
      leave()
      throw error
    }
    let released = false
    const release = () => {
      if (released) return
      released = true
      leave()
      slot?.release()
    }
    const reader = body.getReader()
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read()
          if (!done) return controller.enqueue(value)
          release()
          controller.close()
        } catch (error) {
          release()
          controller.error(error)
        }
      },
      cancel(reason) {
        release()
        return reader.cancel(reason)
      },
    })
  }

  /** The tenant's slot among all instances', when there is a limiter; 429 when none is free. */
  async #slot(tenant: string): Promise<{ release(): void } | undefined> {
    const { limiter, streamMs = 300_000, log } = this.#options
    if (!limiter) return undefined
    const random = this.#options.randomId?.() ?? crypto.randomUUID()
    const id = stampedLeaseId(Date.now(), random)
    let verdict: SlotVerdict
    try {
      verdict = await limiter.acquireSlot(tenant, id, this.max, streamMs + SLOT_GRACE_MS, 'follows')
    } catch (error) {
      if (!isTurnlineError(error, 'coordinator_unavailable')) throw error
      // Fail open, as the request window does: a read needs no coordinator, and this process's
      // bound still holds.
      log?.({ level: 'warn', msg: 'followed stream slots unavailable; stream let through', tenant })
      return undefined
    }
    if (verdict.status === 'full') {
      throw this.#full(Math.min(60, Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))))
    }
    return {
      release: () => {
        limiter.releaseSlot(tenant, id, 'follows').catch((error: unknown) => {
          log?.({
            level: 'warn',
            msg: 'followed stream slot release failed (it lapses on its own)',
            tenant,
            error: error instanceof Error ? error.message : String(error),
          })
        })
      },
    }
  }

  #full(retryAfter: number): TurnlineError {
    return new TurnlineError(
      'rate_limited',
      `too many followed streams: a tenant may hold ${this.max} open at once`,
      { retryAfter },
    )
  }
}
