import type { HistoryMessage } from '../../contract/history-message.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import { INTERRUPTED_OUTPUT, recordToolResult } from '../tools/tool-result.ts'
import type { TurnMachine } from './turn-machine.ts'

/**
 * Ends a turn left open (crash, cancel): its committed but unanswered tool calls complete as
 * failed (never re-run), the model's transcript gets their failure, any item still streaming
 * completes as failed, and the turn fails.
 */
export function closeOpenTurn(input: {
  dispatcher: EventDispatcher
  history: HistoryMessage[]
  turn: TurnMachine
  why: 'interrupted' | 'cancelled'
}): void {
  const { dispatcher, history, why } = input
  const { open } = input.turn
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
  input.turn.apply({ type: 'calls_abandoned' })
  dispatcher.failOpenItems()
  dispatcher.emit({
    type: 'turn.failed',
    message: `${open.turn_id} ${why === 'cancelled' ? 'was cancelled' : 'was interrupted before it finished'}`,
    usage: open.usage,
  })
}
