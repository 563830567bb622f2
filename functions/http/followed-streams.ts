import { TurnlineError } from '../../src/contract/errors.ts'

/**
 * Followed streams (`GET …/events?follow=1`, `GET /v1/responses/{id}` streaming a response that
 * still runs) one tenant may hold open on one server process. Each holds a connection and reads
 * the store every poll for up to the follow limit, so without a bound one tenant's streams
 * could use up what every tenant shares (DESIGN.md §5, invariant 10).
 */
export const MAX_FOLLOWED_STREAMS_PER_TENANT = 64

/** The followed streams each tenant holds open in this process. */
export class FollowedStreams {
  readonly #held = new Map<string, number>()

  constructor(readonly max = MAX_FOLLOWED_STREAMS_PER_TENANT) {}

  /**
   * Holds `body` as one of `tenant`'s followed streams until it ends, fails or is cancelled;
   * 429 `rate_limited` when the tenant holds `max` already.
   */
  hold(tenant: string, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const held = this.#held.get(tenant) ?? 0
    if (held >= this.max) {
      throw new TurnlineError(
        'rate_limited',
        `too many followed streams: a tenant may hold ${this.max} open on one server`,
        { retryAfter: 1 },
      )
    }
    this.#held.set(tenant, held + 1)
    let released = false
    const release = () => {
      if (released) return
      released = true
      const left = (this.#held.get(tenant) ?? 1) - 1
      if (left > 0) this.#held.set(tenant, left)
      else this.#held.delete(tenant)
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
}
