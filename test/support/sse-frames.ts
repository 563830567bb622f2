import { SseDecoder, type SseFrame } from '../../src/shared/sse-decoder.ts'

export type { SseFrame }

/**
 * Splits a whole SSE body into its frames with the one SSE decoder, and keeps its comment lines
 * (keep-alives) for the tests that look for them.
 */
export function parseSse(text: string): { frames: SseFrame[]; comments: string[] } {
  const comments: string[] = []
  const frames = new SseDecoder((line) => comments.push(line)).push(text)
  return { frames, comments }
}
