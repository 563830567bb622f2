/**
 * The plan in a planning turn's output: VT Code's plan agent writes it inside one
 * `<proposed_plan>…</proposed_plan>` block (markdown). Two readers: {@link extractProposedPlan}
 * for a finished text, and {@link ProposedPlanStream} for streamed text, which yields the plan as
 * deltas while it arrives (for `plan.delta` events), holding back only what could be a split tag.
 */

export const PLAN_OPEN_TAG = '<proposed_plan>'
export const PLAN_CLOSE_TAG = '</proposed_plan>'

export interface ProposedPlan {
  /** The block's markdown, trimmed. */
  text: string
  /** False when the block was never closed (output cut at the token limit). */
  complete: boolean
  /** The output outside the block (before + after), trimmed. */
  remainder: string
}

/**
 * The plan of a finished output: the last closed block (a model may revise within one answer),
 * else a trailing unclosed one; undefined when there is no block.
 */
export function extractProposedPlan(output: string): ProposedPlan | undefined {
  let found: { start: number; end: number; body: string; complete: boolean } | undefined
  let at = 0
  for (;;) {
    const open = output.indexOf(PLAN_OPEN_TAG, at)
    if (open < 0) break
    const bodyStart = open + PLAN_OPEN_TAG.length
    const close = output.indexOf(PLAN_CLOSE_TAG, bodyStart)
    if (close < 0) {
      if (!found)
        found = { start: open, end: output.length, body: output.slice(bodyStart), complete: false }
      break
    }
    found = {
      start: open,
      end: close + PLAN_CLOSE_TAG.length,
      body: output.slice(bodyStart, close),
      complete: true,
    }
    at = found.end
  }
  if (!found) return undefined
  return {
    text: found.body.trim(),
    complete: found.complete,
    remainder: `${output.slice(0, found.start)}${output.slice(found.end)}`.trim(),
  }
}

export type PlanSegment =
  | { kind: 'text'; text: string }
  | { kind: 'plan_start' }
  | { kind: 'plan_delta'; text: string }
  | { kind: 'plan_end' }

/** Incremental reader of streamed output; tags split across chunks are handled. */
export class ProposedPlanStream {
  private buffer = ''
  private inPlan = false

  /** Feeds one chunk; returns the segments that are certain so far. */
  push(chunk: string): PlanSegment[] {
    this.buffer += chunk
    const out: PlanSegment[] = []
    for (;;) {
      const tag = this.inPlan ? PLAN_CLOSE_TAG : PLAN_OPEN_TAG
      const index = this.buffer.indexOf(tag)
      if (index >= 0) {
        this.emitText(out, this.buffer.slice(0, index))
        out.push({ kind: this.inPlan ? 'plan_end' : 'plan_start' })
        this.inPlan = !this.inPlan
        this.buffer = this.buffer.slice(index + tag.length)
        continue
      }
      const keep = partialTagSuffix(this.buffer, tag)
      this.emitText(out, this.buffer.slice(0, this.buffer.length - keep))
      this.buffer = this.buffer.slice(this.buffer.length - keep)
      return out
    }
  }

  /** Flushes the rest at the end of the stream (an open plan ends without `plan_end`). */
  finish(): PlanSegment[] {
    const out: PlanSegment[] = []
    this.emitText(out, this.buffer)
    this.buffer = ''
    return out
  }

  /** True while inside an unclosed block. */
  get planOpen(): boolean {
    return this.inPlan
  }

  private emitText(out: PlanSegment[], text: string): void {
    if (!text) return
    out.push(this.inPlan ? { kind: 'plan_delta', text } : { kind: 'text', text })
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  for (let length = Math.min(tag.length - 1, text.length); length > 0; length--) {
    if (text.endsWith(tag.slice(0, length))) return length
  }
  return 0
}
