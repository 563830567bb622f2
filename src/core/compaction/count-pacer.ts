import type { Tokenizer } from '../../ports/tokenizer.ts'
import type { EventLoopPacer } from '../../shared/event-loop-pacer.ts'
import { eachCountingPiece, PIECE_CHARS } from './counting-pieces.ts'

/**
 * Token counting shares the thread with every other request of the process, so long counts are
 * done a piece at a time and give the event loop a turn whenever {@link SLICE_MS} of counting
 * passed since the last one (an `EventLoopPacer`, src/shared/event-loop-pacer.ts). One piece
 * costs at most ≈ 2.5 ms on the slowest text measured (random base64, ≈ 1.3 s of CPU per MB), so
 * no stretch of counting holds the thread for much more than the slice.
 */
export const SLICE_MS = 3

/**
 * The tokenizer's count of `text`, yielding between pieces. A text of up to {@link PIECE_CHARS}
 * is one call; a longer one is counted as its bounded pieces plus one token per cut — what the
 * BPE tokenizer's own `count` answers for the whole text (bpe-tokenizer.ts). Counting stops once
 * the count reaches `limit`: the figure is then at least `limit` and at most the whole count.
 */
export async function countPaced(
  tokenizer: Tokenizer,
  text: string,
  pacer: EventLoopPacer,
  limit = Number.POSITIVE_INFINITY,
): Promise<number> {
  if (text.length <= PIECE_CHARS) {
    const tokens = tokenizer.count(text)
    await pacer.tick()
    return tokens
  }
  let tokens = -1
  for (const piece of eachCountingPiece(text)) {
    tokens += 1 + tokenizer.count(piece)
    await pacer.tick()
    if (tokens >= limit) break
  }
  return tokens
}
