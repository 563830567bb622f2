import type { EventLoopPacer } from '../../src/shared/event-loop-pacer.ts'
import { GitUnreadable } from './git-unreadable.ts'

/** Delta instructions applied between checks of the reading's slice of the event loop. */
const OPS_PER_CHECK = 4096

/**
 * git's delta format: the sizes, then copies from the base and literal inserts. `maxBytes` bounds
 * what it makes; a delta of one-byte copies takes a step per byte, so it pauses for the other
 * requests (`slices`) as it goes.
 */
export async function applyDelta(
  base: Buffer,
  delta: Buffer,
  maxBytes: number,
  slices: EventLoopPacer,
): Promise<Buffer> {
  let at = 0
  const size = () => {
    let value = 0
    let shift = 0
    let byte: number
    do {
      byte = delta[at++] ?? 0
      value += (byte & 0x7f) * 2 ** shift
      shift += 7
    } while (byte & 0x80)
    return value
  }
  if (size() !== base.length) throw new GitUnreadable('a delta for another base')
  const made = size()
  if (made > maxBytes) throw new GitUnreadable(`a delta making ${made} bytes`)
  const out = Buffer.alloc(made)
  let written = 0
  for (let ops = 1; at < delta.length; ops++) {
    if (ops % OPS_PER_CHECK === 0) await slices.tick()
    const op = delta[at++] ?? 0
    if (op & 0x80) {
      let from = 0
      let length = 0
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) from += (delta[at++] ?? 0) * 256 ** bit
      for (let bit = 0; bit < 3; bit++) {
        if (op & (0x10 << bit)) length += (delta[at++] ?? 0) * 256 ** bit
      }
      if (length === 0) length = 0x10000
      if (from + length > base.length || written + length > out.length) {
        throw new GitUnreadable('a delta copies outside its base')
      }
      base.copy(out, written, from, from + length)
      written += length
    } else if (op > 0) {
      if (at + op > delta.length || written + op > out.length)
        throw new GitUnreadable('a bad delta')
      delta.copy(out, written, at, at + op)
      at += op
      written += op
    } else {
      throw new GitUnreadable('a delta with the reserved opcode 0')
    }
  }
  if (written !== out.length) throw new GitUnreadable('a delta shorter than it says')
  return out
}
