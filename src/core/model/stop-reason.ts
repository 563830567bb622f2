/**
 * The provider's finish reason as VT Code reports it in `thread.completed.stop_reason`:
 * a natural end is `end_turn`, a cut answer `max_tokens`, a request for tools `tool_calls`
 * (Chat's `stop`/`length`/`tool_calls`/`function_call`, the Responses API's `completed` and
 * `max_output_tokens`). Any other reason (`content_filter`, …) is kept as the provider said it.
 */
export function normalizeStopReason(raw: string): string {
  switch (raw.trim().toLowerCase()) {
    case 'stop':
    case 'end_turn':
    case 'completed':
      return 'end_turn'
    case 'length':
    case 'max_tokens':
    case 'max_output_tokens':
      return 'max_tokens'
    case 'tool_calls':
    case 'function_call':
    case 'tool_use':
      return 'tool_calls'
    default:
      return raw
  }
}
