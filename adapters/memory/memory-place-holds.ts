import type { Clock } from '../../src/ports/clock.ts'
import { checkPlaceHold } from '../../src/ports/coordinator-checks.ts'
import type { PlaceBook } from '../../src/ports/place-holds.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { MemoryActivityIndex } from './memory-activity-index.ts'

/** One scope's book: its version and its holds' deadlines (epoch ms). */
interface Book {
  version: number
  holds: Map<string, number>
}

/**
 * The place holds in one process, with the semantics of the Redis ones
 * (adapters/shared/redis-place-holds.ts), the base of the in-process coordinator (beside its
 * activity index). Each method runs between awaits, so each is atomic like a script.
 */
export class MemoryPlaceHolds extends MemoryActivityIndex implements PlaceBook {
  readonly #placeClock: Clock
  readonly #books = new Map<string, Book>()

  constructor(clock: Clock = systemClock) {
    super()
    this.#placeClock = clock
  }

  async readPlaces(scope: string): Promise<{ version: string; held: string[] }> {
    checkPlaceHold(scope)
    const book = this.#book(scope)
    return { version: String(book.version), held: [...book.holds.keys()] }
  }

  async holdPlace(
    scope: string,
    id: string,
    seen: { version: string; free: number },
    ttlMs: number,
  ): Promise<boolean> {
    checkPlaceHold(scope, id, ttlMs)
    const book = this.#book(scope)
    if (book.holds.has(id)) return true
    const since = book.version - Number(seen.version)
    if (!(since >= 0 && since < seen.free)) return false
    book.holds.set(id, this.#placeClock.now() + ttlMs)
    book.version += 1
    return true
  }

  async releasePlace(scope: string, id: string): Promise<void> {
    checkPlaceHold(scope, id)
    this.#books.get(scope)?.holds.delete(id)
  }

  /** The scope's book with its lapsed holds dropped. */
  #book(scope: string): Book {
    let book = this.#books.get(scope)
    if (!book) {
      book = { version: 0, holds: new Map() }
      this.#books.set(scope, book)
    }
    const now = this.#placeClock.now()
    for (const [id, until] of book.holds) if (until <= now) book.holds.delete(id)
    return book
  }
}
