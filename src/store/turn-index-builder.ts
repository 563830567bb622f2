import type { TurnIndex } from '../contract/turn-index.ts'
import { utf8Length } from '../shared/utf8-length.ts'

const TYPE_AT_HEAD = /^\{"schema_version":"[^"]*","event":\{"type":"([^"]+)"/

/** The event type of a serialized versioned line (fast path for our own key order). */
export function lineType(line: string): string | undefined {
  const match = TYPE_AT_HEAD.exec(line)
  if (match) return match[1]
  try {
    const parsed = JSON.parse(line) as { event?: { type?: unknown } }
    return typeof parsed.event?.type === 'string' ? parsed.event.type : undefined
  } catch {
    return undefined
  }
}

const isTurnEnd = (type: string | undefined) => type === 'turn.completed' || type === 'turn.failed'

/**
 * Cuts the oldest completed turns from the head so at most `max` lines remain (VT Code's
 * per-session cap). Cuts only right after a turn end; when no such point frees enough room the
 * lines are kept whole (never a partial turn).
 */
export function cutHead(
  lines: string[],
  max: number,
): { lines: string[]; removed: number; removedTurns: number } {
  const excess = lines.length - max
  if (excess <= 0) return { lines, removed: 0, removedTurns: 0 }
  let turns = 0
  for (let i = 0; i < lines.length; i++) {
    if (!isTurnEnd(lineType(lines[i] ?? ''))) continue
    turns += 1
    if (i + 1 >= excess) return { lines: lines.slice(i + 1), removed: i + 1, removedTurns: turns }
  }
  return { lines, removed: 0, removedTurns: 0 }
}

/**
 * VT Code's `index/turns.json` for the given events.jsonl lines: one entry per completed turn
 * (turn.started … turn.completed|turn.failed), byte offsets into the file, 1-based turn numbers
 * that stay stable when old turns are cut. Timestamps come from the previous index, else from
 * the commit time of the batch holding the turn's end (`endTimes`, by seq).
 */
export function buildTurnIndex(
  lines: string[],
  headSeq: number,
  previous: TurnIndex | undefined,
  endTimes: ReadonlyMap<number, string>,
  removedTurns: number,
): TurnIndex {
  const previousTs = new Map(previous?.entries.map((e) => [e.turn_number, e.ts]) ?? [])
  let turnNumber = (previous?.entries[0]?.turn_number ?? 1) + removedTurns
  const entries: TurnIndex['entries'] = []
  let offset = 0
  let open: { start: number; firstLine: number } | undefined
  lines.forEach((line, i) => {
    const type = lineType(line)
    const end = offset + utf8Length(line) + 1
    if (type === 'turn.started') open = { start: offset, firstLine: i }
    else if (isTurnEnd(type) && open) {
      const ts = previousTs.get(turnNumber) ?? endTimes.get(headSeq + i) ?? lastTs(entries)
      entries.push({
        turn_number: turnNumber,
        start_offset: open.start,
        end_offset: end,
        event_count: i - open.firstLine + 1,
        ts,
      })
      turnNumber += 1
      open = undefined
    }
    offset = end
  })
  return { entries }
}

function lastTs(entries: TurnIndex['entries']): string {
  return entries[entries.length - 1]?.ts ?? new Date(0).toISOString()
}
