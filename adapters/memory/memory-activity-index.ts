import {
  ACTIVITY_MOVES_WINDOW_MS,
  type ActivityEntry,
  type ActivityIndex,
  type ActivityMove,
  type ActivityScan,
  type ActivityScanQuery,
  type ActivityScope,
  type ActivityTouch,
} from '../../src/ports/activity-index.ts'

/** One workspace's index: positions by session, the moves of the last window, the clock. */
interface Scope {
  positions: Map<string, number>
  /** Oldest first. */
  moves: { at: number; from: number; sessionId: string }[]
  clock: number
  filledAtMs?: number
}

/**
 * The activity index in this process, with the semantics of the Redis one
 * (adapters/shared/redis-activity-index.ts): a clock per workspace that never goes back, moves
 * kept for `ACTIVITY_MOVES_WINDOW_MS`. Every method runs synchronously between awaits, so each is
 * atomic like a Lua script. A scan sorts the workspace's sessions: fine for one process's sessions
 * (the embedded default), where the index is rebuilt from the store after a restart.
 */
export class MemoryActivityIndex implements ActivityIndex {
  readonly #scopes = new Map<string, Scope>()

  /** The touch itself, for the coordinator's `endTurn`. */
  touch(touch: ActivityTouch): void {
    const scope = this.#scope(touch)
    const at = Math.max(touch.atMs, scope.clock + 1)
    const old = scope.positions.get(touch.sessionId)
    if (old !== undefined) {
      scope.moves.push({ at, from: old, sessionId: touch.sessionId })
      const cut = at - ACTIVITY_MOVES_WINDOW_MS
      const kept = scope.moves.findIndex((move) => move.at >= cut)
      if (kept > 0) scope.moves.splice(0, kept)
    }
    scope.positions.set(touch.sessionId, at)
    scope.clock = at
  }

  async touchActivity(touch: ActivityTouch): Promise<void> {
    this.touch(touch)
  }

  async scanActivity(query: ActivityScanQuery): Promise<ActivityScan> {
    const scope = this.#scope(query)
    const asOf = query.asOf ?? scope.clock
    const { boundary } = query
    const desc = query.direction === 'desc'
    const all: ActivityEntry[] = [...scope.positions].map(([sessionId, position]) => ({
      sessionId,
      position,
    }))
    const beyond = all
      .filter(
        ({ position }) =>
          position <= asOf &&
          (boundary === undefined || (desc ? position < boundary : position > boundary)),
      )
      .sort((a, b) => (desc ? b.position - a.position : a.position - b.position))
      .slice(0, query.limit)
    const ties = boundary === undefined ? [] : all.filter(({ position }) => position === boundary)
    const moved: ActivityMove[] = []
    const seen = new Set<string>()
    for (const move of scope.moves) {
      if (move.at <= asOf || seen.has(move.sessionId)) continue
      seen.add(move.sessionId)
      const position = scope.positions.get(move.sessionId)
      if (position !== undefined)
        moved.push({ sessionId: move.sessionId, position, from: move.from })
    }
    const filled = scope.filledAtMs
    return { asOf, beyond, ties, moved, ...(filled === undefined ? {} : { filledAtMs: filled }) }
  }

  async missingActivity(scope: ActivityScope, sessionIds: readonly string[]): Promise<string[]> {
    const { positions } = this.#scope(scope)
    return sessionIds.filter((id) => !positions.has(id))
  }

  async backfillActivity(
    where: ActivityScope,
    entries: readonly ActivityEntry[],
    filledAtMs: number,
  ): Promise<void> {
    const scope = this.#scope(where)
    for (const { sessionId, position } of entries) {
      if (scope.positions.has(sessionId)) continue
      scope.positions.set(sessionId, position)
      scope.clock = Math.max(scope.clock, position)
    }
    scope.filledAtMs = filledAtMs
  }

  async dropActivity(where: ActivityScope, sessionIds: readonly string[]): Promise<void> {
    const scope = this.#scopes.get(scopeKey(where))
    for (const id of sessionIds) scope?.positions.delete(id)
  }

  #scope(where: ActivityScope): Scope {
    const key = scopeKey(where)
    let scope = this.#scopes.get(key)
    if (scope === undefined) {
      scope = { positions: new Map(), moves: [], clock: 0 }
      this.#scopes.set(key, scope)
    }
    return scope
  }
}

function scopeKey({ tenant, workspace }: ActivityScope): string {
  return `${tenant}/${workspace}`
}
