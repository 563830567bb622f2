import { TurnlineError } from '../../contract/errors.ts'
import type { PlaceBook } from '../../ports/place-holds.ts'

/**
 * How long a hold stands: its write must be done by then (a few store calls, each under its own
 * deadline), and a holder that died keeps its place no longer.
 */
export const PLACE_HOLD_TTL_MS = 120_000

/** Checks in a row that lost to another admission of the scope before the request gives up. */
const MAX_ATTEMPTS = 40

export interface PlaceRequest {
  book: PlaceBook
  /** What is counted, and whose: `<cap>/<tenant>`. */
  scope: string
  max: number
  /**
   * The ids of what the store holds of it now, listed as far as `upTo`, named as `id` names what
   * the write adds, so a hold whose write is already listed is counted once.
   */
  stored: (upTo: number) => Promise<readonly string[]>
  /** What the write adds (a loop id), or a fresh id when it cannot be named before. */
  id: string
  /** The refusal when the scope has no place left. */
  refused: () => TurnlineError
}

/**
 * Runs `write` — which adds one to a capped count in the store — only when the count stays
 * within `max`, exactly, however many instances admit at once. A place is what the store lists
 * plus the holds standing for writes not made yet (the same id once); the check and the hold
 * are one step (`holdPlace` fails when as many holds were taken since the read as places were
 * free, and the check is made again), so two admissions never both take the last place, and
 * admissions far from the cap do not wait on each other. The hold is read before the
 * listing and dropped only once the write is done, so a write is always seen as one or the
 * other. What leaves the store frees its place at once; a hold whose holder died lapses after
 * PLACE_HOLD_TTL_MS. What the deployment writes on its own, unchecked, is counted by the
 * checks after it.
 */
export async function withPlace<T>(request: PlaceRequest, write: () => Promise<T>): Promise<T> {
  const { book, scope, id } = request
  for (let attempt = 0; ; attempt++) {
    if (attempt === MAX_ATTEMPTS) throw contended()
    const seen = await assertRoom(request)
    // Stored already: the write adds nothing (a retry of a request that got that far).
    if (seen === 'stored') return write()
    if (await book.holdPlace(scope, id, seen, PLACE_HOLD_TTL_MS)) break
  }
  try {
    return await write()
  } finally {
    // A release that fails leaves the hold to lapse: the count is only high for that long.
    await book.releasePlace(scope, id).catch(() => undefined)
  }
}

/**
 * Throws the refusal when the scope has no place left now; else the book's version read and the
 * places found free, or `stored` when what the write adds is listed already (never refused).
 * Alone, a check that holds nothing: what depends on a later write taking the place (withPlace).
 */
export async function assertRoom(
  request: PlaceRequest,
): Promise<{ version: string; free: number } | 'stored'> {
  const { version, held } = await request.book.readPlaces(request.scope)
  const taken = new Set(await request.stored(request.max))
  if (taken.has(request.id)) return 'stored'
  for (const other of held) if (other !== request.id) taken.add(other)
  if (taken.size >= request.max) throw request.refused()
  return { version, free: request.max - taken.size }
}

function contended(): TurnlineError {
  return new TurnlineError(
    'coordinator_unavailable',
    'too many requests of this tenant are taking a capped place at once; retry',
    { retryable: true, retryAfter: 1 },
  )
}
