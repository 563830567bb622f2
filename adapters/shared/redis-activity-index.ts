import { TurnlineError } from '../../src/contract/errors.ts'
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
import * as scripts from './activity-redis-scripts.ts'
import { asArray, corrupt } from './coordinator-redis-replies.ts'
import type { IoDeadline } from './io-deadline.ts'
import { callRedis, type RedisCommands } from './redis-commands.ts'

/**
 * The activity index in Redis, the base of the Redis coordinators (redis-coordinator.ts): per
 * workspace of a tenant, `<prefix>activity:<tenant>/<workspace>` (sessions by position),
 * `<prefix>activity-moves:…` and `<prefix>activity-meta:…` (activity-redis-scripts.ts). Every call
 * is one Lua script; `endTurn` runs the touch inside its own script (`touchArgs`), so a turn costs
 * no round trip more.
 */
export class RedisActivityIndex<C extends RedisCommands = RedisCommands> implements ActivityIndex {
  /** The transport: the adapter's own client behind it. */
  protected readonly commands: C
  /** The deadline of every call. */
  readonly deadline: IoDeadline
  readonly #ns: string

  constructor(commands: C, deadline: IoDeadline, namespace: string) {
    this.commands = commands
    this.deadline = deadline
    this.#ns = namespace
  }

  /** The keys and arguments of a touch, for a script that includes `TOUCH_ACTIVITY_FN`. */
  touchArgs(touch: ActivityTouch): { keys: string[]; args: string[] } {
    checkTouch(touch)
    return {
      keys: this.#keys(touch),
      args: [touch.sessionId, String(touch.atMs), String(ACTIVITY_MOVES_WINDOW_MS)],
    }
  }

  async touchActivity(touch: ActivityTouch): Promise<void> {
    const { keys, args } = this.touchArgs(touch)
    await this.#eval('touchActivity', scripts.TOUCH_ACTIVITY, keys, args)
  }

  async scanActivity(query: ActivityScanQuery): Promise<ActivityScan> {
    const reply = await this.#eval('scanActivity', scripts.SCAN_ACTIVITY, this.#keys(query), [
      query.asOf === undefined ? '' : String(query.asOf),
      query.direction,
      query.boundary === undefined ? '' : String(query.boundary),
      String(query.limit),
    ])
    const [asOf, filled, beyond, ties, moved] = asArray(reply, 'scanActivity')
    return {
      asOf: position(asOf),
      beyond: entries(beyond),
      ties: entries(ties),
      moved: moves(moved),
      ...(filled === null || filled === undefined || filled === false
        ? {}
        : { filledAtMs: position(filled) }),
    }
  }

  async missingActivity(scope: ActivityScope, sessionIds: readonly string[]): Promise<string[]> {
    if (sessionIds.length === 0) return []
    const set = this.#keys(scope).slice(0, 1)
    const reply = await this.#eval('missingActivity', scripts.MISSING_ACTIVITY, set, [
      ...sessionIds,
    ])
    return asArray(reply, 'missingActivity').map(String)
  }

  async backfillActivity(
    scope: ActivityScope,
    added: readonly ActivityEntry[],
    filledAtMs: number,
  ): Promise<void> {
    const [set, , meta] = this.#keys(scope) as [string, string, string]
    const args = [String(filledAtMs)]
    for (const entry of added) args.push(String(entry.position), entry.sessionId)
    await this.#eval('backfillActivity', scripts.BACKFILL_ACTIVITY, [set, meta], args)
  }

  async dropActivity(scope: ActivityScope, sessionIds: readonly string[]): Promise<void> {
    if (sessionIds.length === 0) return
    const set = this.#keys(scope).slice(0, 1)
    await this.#eval('dropActivity', scripts.DROP_ACTIVITY, set, [...sessionIds])
  }

  #keys({ tenant, workspace }: ActivityScope): string[] {
    const scope = `${tenant}/${workspace}`
    return ['activity', 'activity-moves', 'activity-meta'].map(
      (kind) => `${this.#ns}${kind}:${scope}`,
    )
  }

  #eval(operation: string, script: string, keys: string[], args: string[]): Promise<unknown> {
    return callRedis(this.deadline, this.commands, operation, () =>
      this.commands.eval(script, keys, args),
    )
  }
}

function checkTouch(touch: ActivityTouch): void {
  if (!Number.isSafeInteger(touch.atMs) || touch.atMs < 0) {
    throw new TurnlineError('invalid_input', 'atMs must be a non-negative integer')
  }
}

function position(value: unknown): number {
  const number = typeof value === 'string' ? Number(value) : value
  if (typeof number !== 'number' || !Number.isSafeInteger(number)) {
    throw corrupt('scanActivity', value)
  }
  return number
}

/** `{id, position, id, position…}` as entries. */
function entries(value: unknown): ActivityEntry[] {
  const flat = asArray(value, 'scanActivity')
  const out: ActivityEntry[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    out.push({ sessionId: String(flat[i]), position: position(flat[i + 1]) })
  }
  return out
}

/** `{'<at>:<from>:<id>', position…}` as moves. */
function moves(value: unknown): ActivityMove[] {
  const flat = asArray(value, 'scanActivity')
  const out: ActivityMove[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const member = String(flat[i])
    const first = member.indexOf(':')
    const second = member.indexOf(':', first + 1)
    if (first < 0 || second < 0) throw corrupt('scanActivity', member)
    out.push({
      sessionId: member.slice(second + 1),
      from: position(member.slice(first + 1, second)),
      position: position(flat[i + 1]),
    })
  }
  return out
}
