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
  /**
   * What the write adds, named as `stored` names it (a loop id, a pending record's
   * `<session>/<work>.json`): the hold bears it, so the write is counted once, whether it is
   * seen as the hold, the listed key, or both in the moment between its write and the release.
   */
  id: string
  /**
   * This request's own mark (random): its hold is `<id>#<holder>`, so two requests of one name
   * (a request and its retry) hold apart — one dropping its hold never drops the other's — and
   * count as the one place the name takes.
   */
  holder: string
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
export async function withPlace<T>(
  request: PlaceRequest,
  write: () => Promise<T>,
  /**
   * Asked only when the scope is full: the answer of the request made before under the same
   * name, which adds nothing (a keyed retry of work that ran), or undefined to be refused.
   */
  earlier?: () => Promise<T | undefined>,
): Promise<T> {
  const { book, scope } = request
  const hold = `${request.id}#${request.holder}`
  for (let attempt = 0; ; attempt++) {
    if (attempt === MAX_ATTEMPTS) throw contended()
    const seen = await checkRoom(request)
    // Stored already: the write adds nothing (a retry of a request that got that far).
    if (seen === 'stored') return write()
    if (seen === 'full') {
      const answer = await earlier?.()
      if (answer !== undefined) return answer
      throw request.refused()
    }
    if (await book.holdPlace(scope, hold, seen, PLACE_HOLD_TTL_MS)) break
  }
  try {
    return await write()
  } finally {
    // A release that fails leaves the hold to lapse: the count is only high for that long.
    // Only this request's own hold: another of the same name still writing keeps its place.
    await book.releasePlace(scope, hold).catch(() => undefined)
  }
}

/**
 * The book's version read and the places found free; `stored` when what the write adds is
 * listed already (never refused), `full` when the scope has no place left now. A hold and the
 * listed key of the same id are one place: a write named before is never counted twice.
 */
async function checkRoom(
  request: PlaceRequest,
): Promise<{ version: string; free: number } | 'stored' | 'full'> {
  const { version, held } = await request.book.readPlaces(request.scope)
  const taken = new Set(await request.stored(request.max))
  if (taken.has(request.id)) return 'stored'
  // Holds are `<id>#<holder>` (a bare `<id>` from before is its own name): one place a name.
  for (const other of held) {
    const name = holdName(other)
    if (name !== request.id) taken.add(name)
  }
  if (taken.size >= request.max) return 'full'
  return { version, free: request.max - taken.size }
}

function holdName(hold: string): string {
  const mark = hold.indexOf('#')
  return mark === -1 ? hold : hold.slice(0, mark)
}

function contended(): TurnlineError {
  return new TurnlineError(
    'coordinator_unavailable',
    'too many requests of this tenant are taking a capped place at once; retry',
    { retryable: true, retryAfter: 1 },
  )
}
