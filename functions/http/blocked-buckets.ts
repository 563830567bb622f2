/**
 * The failure buckets this instance saw empty, each until its next token: while one of a
 * request's buckets is here, the request is refused without asking the coordinator (a flood
 * costs no round trips). Bounded: at `max` entries the lapsed ones go, then the oldest, down to
 * 90 % — forgetting one only lets its next failure ask the coordinator again.
 */
export class BlockedBuckets {
  readonly #until = new Map<string, number>()

  constructor(readonly max = 10_000) {}

  /** How long the longest-blocked of `buckets` stays blocked at `nowMs` (0: none is). */
  waitMs(buckets: readonly string[], nowMs: number): number {
    let wait = 0
    for (const bucket of buckets) {
      const until = this.#until.get(bucket)
      if (until === undefined) continue
      if (until <= nowMs) this.#until.delete(bucket)
      else wait = Math.max(wait, until - nowMs)
    }
    return wait
  }

  block(bucket: string, untilMs: number, nowMs: number): void {
    this.#until.delete(bucket)
    if (this.#until.size >= this.max) this.#trim(nowMs)
    this.#until.set(bucket, untilMs)
  }

  #trim(nowMs: number): void {
    for (const [bucket, until] of this.#until) if (until <= nowMs) this.#until.delete(bucket)
    const keep = Math.floor(this.max * 0.9)
    for (const bucket of this.#until.keys()) {
      if (this.#until.size <= keep) break
      this.#until.delete(bucket)
    }
  }
}
