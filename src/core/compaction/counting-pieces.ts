/**
 * Bounded pieces for BPE counting. gpt-tokenizer merges each pre-tokenized piece with a loop that
 * is quadratic in the piece's length (a linear scan for the lowest-ranked pair and an array splice
 * per merge), and its pre-tokenizer makes one piece of a whole run of letters, of punctuation or of
 * whitespace — so a long run without a space (base64 of anything repetitive, minified code, a
 * column of padding) cost seconds per 100 KB and minutes per MB, all of it synchronous.
 *
 * Counted as pieces of about {@link PIECE_CHARS} characters, in which no run of spaces or of
 * non-spaces is longer than {@link RUN_CHARS}, the work is linear in the text's length and no
 * single tokenizer call holds the thread for long. A piece ends where the pre-tokenizer splits
 * anyway when it can (before a space that follows a non-space: a space belongs to the word after
 * it), and inside a long run otherwise. A cut can change the count by about one token either way
 * (a merge across it is lost, or a pair on one side merges instead), so every cut adds one token:
 * the sum errs towards counting more. Measured on prose, random and repetitive base64 and
 * minified JavaScript it is 0.01–0.7 % above the exact count (`bench/token-counting.ts`).
 */

/** Pieces end at the first space after this many characters. */
export const PIECE_CHARS = 2048
/** No run of spaces or of non-spaces inside a piece is longer than this. */
export const RUN_CHARS = 256

/** The text as bounded pieces; their concatenation is the text. A short text is one piece. */
export function countingPieces(text: string): string[] {
  return [...eachCountingPiece(text)]
}

/** The same pieces one at a time, so a long text is split as it is counted. */
export function* eachCountingPiece(text: string): Generator<string> {
  if (text.length <= RUN_CHARS) {
    yield text
    return
  }
  let start = 0
  let run = 0
  let previousSpace = isSpace(text.charCodeAt(0))
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const space = isSpace(code)
    if (space !== previousSpace) {
      run = 0
      if (space && i - start >= PIECE_CHARS) {
        yield text.slice(start, i)
        start = i
      }
    } else if (run >= RUN_CHARS && !(code >= 0xdc00 && code <= 0xdfff)) {
      // never between the two halves of a surrogate pair
      yield text.slice(start, i)
      start = i
      run = 0
    }
    run++
    previousSpace = space
  }
  yield text.slice(start)
}

/** Σ count(piece) plus one per cut (see above). Linear in the text's length. */
export function countInPieces(text: string, count: (piece: string) => number): number {
  let total = -1
  for (const piece of eachCountingPiece(text)) total += 1 + count(piece)
  return total
}

/** JavaScript's `\s`, which the tokenizers' pre-tokenizer patterns split on. */
function isSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d)
  if (code < 0xa0) return false
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  )
}
