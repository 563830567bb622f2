import type { ExecCapture } from '../../src/contract/runner-answers.ts'
import { backToBoundary, forwardToBoundary } from './utf8-cut.ts'

/**
 * Output of [from, to) as a capture: all of it when it fits in `maxBytes`, else its head and
 * tail, each ≤ maxBytes, cut on UTF-8 boundaries. `read` reads the spool (it may refuse).
 */
export function headAndTail(
  read: (offset: number, size: number) => Buffer,
  from: number,
  to: number,
  maxBytes: number,
): ExecCapture['output'] {
  const length = to - from
  if (length <= maxBytes) {
    const head = length === 0 ? '' : read(from, length).toString('utf8')
    return { from, to, head, tail: '', omitted_bytes: 0 }
  }
  const headBytes = backToBoundary(read(from, maxBytes))
  const tailSize = Math.min(maxBytes, length - headBytes.byteLength)
  const tailBytes = forwardToBoundary(read(to - tailSize, tailSize))
  return {
    from,
    to,
    head: headBytes.toString('utf8'),
    tail: tailBytes.toString('utf8'),
    omitted_bytes: length - headBytes.byteLength - tailBytes.byteLength,
  }
}
