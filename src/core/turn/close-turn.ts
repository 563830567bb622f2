import type { OpenTurn } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import { INTERRUPTED_OUTPUT, recordToolResult } from '../tools/tool-result.ts'

/**
 * Ends a turn left open (crash, cancel): its committed but unanswered tool calls complete as
 * failed (never re-run), the model's transcript gets their failure, any item still streaming
 * completes as failed, and the turn fails.
 */
export function closeOpenTurn(
  dispatcher: EventDispatcher,
  history: HistoryMessage[],
  open: OpenTurn,
  why: 'interrupted' | 'cancelled',
): void {
  for (const call of open.pending_calls) {
    if (why === 'cancelled') {
      recordToolResult(
        dispatcher,
        history,
        call,
        'failed',
        'cancelled',
        'cancelled before the tool result was recorded',
      )
    } else {
      recordToolResult(dispatcher, history, call, 'failed', 'error', INTERRUPTED_OUTPUT)
    }
  }
  open.pending_calls = []
  dispatcher.failOpenItems()
  dispatcher.emit({
    type: 'turn.failed',
    message: `${open.turn_id} ${why === 'cancelled' ? 'was cancelled' : 'was interrupted before it finished'}`,
    usage: open.usage,
  })
}
