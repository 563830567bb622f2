/**
 * Place holds: the places a capped count (a tenant's scheduled loops, its pending background
 * records) is about to take, kept by the Coordinator (a sorted set and a version counter per
 * scope in Redis, a map in the in-process coordinator) so that admissions on every instance are
 * checked one after another. The store stays the record of what is counted; a hold only stands
 * for a write not made yet, from the check until the write is done, and lapses at its deadline
 * when its holder dies (src/core/engine/place-admission.ts has the algorithm).
 *
 * The version counts the holds taken, never a release or a lapse (those only lower the count, so
 * a check made before them is on the safe side): `holdPlace` succeeds only when fewer holds were
 * taken since the caller's `readPlaces` than the places it found free then — each may be a write
 * its listing did not see — which is what makes the check and the hold one step. A hold resent
 * after a lost reply is held once and answers true.
 */
export interface PlaceBook {
  /** The book's version and the ids of the holds still standing (lapsed ones are dropped). */
  readPlaces(scope: string): Promise<{ version: string; held: string[] }>
  /**
   * Holds `id` for `ttlMs` when fewer holds were taken since `seen.version` than `seen.free` (or
   * `id` is held already): false, nothing held, when as many were taken (or the version went
   * back: the book was lost).
   */
  holdPlace(
    scope: string,
    id: string,
    seen: { version: string; free: number },
    ttlMs: number,
  ): Promise<boolean>
  /** Drops the hold (its write is done, or will not be made); an unknown id is no error. */
  releasePlace(scope: string, id: string): Promise<void>
}

/** How long the version of a scope is kept after its last hold (it only has to outlive checks). */
export const PLACE_VERSION_TTL_MS = 7 * 86_400_000
