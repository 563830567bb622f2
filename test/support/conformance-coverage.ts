import type { ConformanceRecord } from './conformance-scenario.ts'

/**
 * What the conformance script is there to exercise, read from one run's transcript: runs that
 * all skipped a case (a threshold that no longer triggers compaction, a directive the model no
 * longer follows) would still be identical, so the reference run must show each of these. The
 * malformed-JSON text is compared with Turnline's own words, not only across runtimes: runtimes
 * that all stored their engine's text would agree with each other.
 */
export const MALFORMED_ARGUMENTS_TEXT =
  "arguments are not valid JSON: expected a closing '\"', found the end of the text at line 1 column 20 (position 19)"

interface Item {
  type?: string
  tool_name?: string
  outcome?: string
  output?: string
  status?: string
}
interface ThreadEvent {
  type?: string
  trigger?: string
  item?: Item
}

export function exercisedCases(records: readonly ConformanceRecord[]): Record<string, boolean> {
  const at = (step: string) => records.find((record) => record.step === step)
  const events = ((at('canonical events')?.body ?? []) as { event?: ThreadEvent }[]).map(
    (line) => line.event ?? {},
  )
  const items = events.filter((e) => e.type === 'item.completed').map((e) => e.item ?? {})
  const outputs = items.filter((item) => item.type === 'tool_output')
  const frames = (step: string) => {
    const record = at(step)
    return record?.contentType.startsWith('text/event-stream') && Array.isArray(record.body)
      ? (record.body as { event?: string }[])
      : []
  }
  const compaction = (trigger: string) =>
    events.some((e) => e.type === 'thread.compact_boundary' && e.trigger === trigger)
  return {
    'an idempotent replay answered as the first call':
      JSON.stringify(at('idempotent replay')?.body) === JSON.stringify(at('plain turn')?.body),
    'an SSE turn streamed': frames('SSE turn with a signed HTTP tool').length > 3,
    'the signed HTTP tool answered': items.some(
      (item) => item.tool_name === 'lookup' && item.outcome === 'success',
    ),
    "malformed arguments described in Turnline's words": outputs.some(
      (item) => item.output === MALFORMED_ARGUMENTS_TEXT,
    ),
    'an unknown tool refused': items.some(
      (item) => item.tool_name === 'nosuch' && item.outcome === 'invalid_tool',
    ),
    "arguments breaking the tool's schema refused": outputs.some((item) =>
      item.output?.startsWith("arguments do not match the tool's schema: #/q:"),
    ),
    'the steering intent applied': events.some((e) => e.type === 'interjected'),
    'automatic compaction': compaction('auto'),
    'manual compaction': compaction('manual'),
    '/v1/responses whole completed':
      (at('responses, whole')?.body as { status?: string } | undefined)?.status === 'completed',
    '/v1/responses streamed completed': frames('responses, streamed').some(
      (frame) => frame.event === 'response.completed',
    ),
  }
}
