import type { TurnIndexEntry } from '../contract/turn-index.ts'
import { utf8Length } from '../shared/utf8-length.ts'
import { lineType } from './turn-index-builder.ts'

/**
 * What the lines of events.jsonl say about its turns: VT Code's turn index entries (byte offsets,
 * 1-based turn numbers that stay stable when old turns are cut) and the turn still open at the
 * file's end, so that appending a batch's lines extends the index without reading the file.
 */
export interface FileShape {
  /** Bytes of the lines scanned, newlines included. */
  size: number
  entries: readonly TurnIndexEntry[]
  /** The number the next completed turn gets. */
  nextTurn: number
  /** The turn open at the end: the offset of its turn.started and its lines so far. */
  open: { start: number; lines: number } | undefined
}

export function emptyShape(firstTurn = 1): FileShape {
  return { size: 0, entries: [], nextTurn: firstTurn, open: undefined }
}

/**
 * The shape after `lines` are appended; they are the file's seqs `firstSeq`, `firstSeq + 1`, …
 * `tsOf(turn, seq)` is the timestamp of the turn that line `seq` completes. The same rules as a
 * whole rebuild (`buildTurnIndex`): a turn runs from its turn.started to its turn.completed or
 * turn.failed, and a turn.started inside an open turn starts it again.
 */
export function extendShape(
  shape: FileShape,
  lines: readonly string[],
  firstSeq: number,
  tsOf: (turn: number, seq: number) => string,
): FileShape {
  let { size, nextTurn } = shape
  let openStart = shape.open?.start
  let openLines = shape.open?.lines ?? 0
  let added: TurnIndexEntry[] | undefined
  lines.forEach((line, i) => {
    const type = lineType(line)
    const end = size + utf8Length(line) + 1
    if (type === 'turn.started') {
      openStart = size
      openLines = 1
    } else if (openStart !== undefined) {
      openLines += 1
      if (type === 'turn.completed' || type === 'turn.failed') {
        added ??= []
        added.push({
          turn_number: nextTurn,
          start_offset: openStart,
          end_offset: end,
          event_count: openLines,
          ts: tsOf(nextTurn, firstSeq + i),
        })
        nextTurn += 1
        openStart = undefined
      }
    }
    size = end
  })
  return {
    size,
    nextTurn,
    open: openStart === undefined ? undefined : { start: openStart, lines: openLines },
    entries: added ? [...shape.entries, ...added] : shape.entries,
  }
}

/** The file as lines (a last line without its newline is not one: a torn append). */
export function completeLines(text: string): { lines: string[]; torn: boolean } {
  const lines = text.split('\n')
  const last = lines.pop()
  return { lines, torn: last !== undefined && last !== '' }
}
