import type { EngineState } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'

/**
 * What a new turn starts with besides its input: feedback waiting for it (a verifier's
 * rejection, which the proposer's next turn must see), and for the first turn of a session
 * started from a handoff, a directive to continue from it (so that turn needs no input).
 */
export const HANDOFF_DIRECTIVE =
  'Continue from the handoff in your orientation context: check the boundary status, read the ' +
  'modified files you need, and carry on with the recommended next actions.'

/** True when a turn without input may start: the first turn after a handoff. */
export function startsFromHandoff(state: EngineState): boolean {
  return state.agent?.handoff !== undefined && state.turn_counter === 0
}

/** Messages to append before the turn's input; clears the feedback it delivers. */
export function turnStartMessages(
  state: EngineState,
  { hasInput }: { hasInput: boolean },
): HistoryMessage[] {
  const messages: HistoryMessage[] = []
  const agent = state.agent
  if (agent?.feedback?.length) {
    for (const text of agent.feedback) messages.push({ role: 'user', content: text })
    delete agent.feedback
  }
  if (!hasInput && messages.length === 0 && startsFromHandoff(state)) {
    messages.push({ role: 'user', content: HANDOFF_DIRECTIVE })
  }
  return messages
}
