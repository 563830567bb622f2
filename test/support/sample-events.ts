import type { ThreadEvent } from '../../src/contract/thread-event.ts'

/** The events of one ordinary turn: started, an assistant message, completed. */
export function turnEvents(n: number, itemCount = 1): ThreadEvent[] {
  const items: ThreadEvent[] = Array.from({ length: itemCount }, (_, i) => ({
    type: 'item.completed',
    item: { id: `item_${n}_${i}`, type: 'agent_message', text: `turn ${n} message ${i}` },
  }))
  return [
    { type: 'turn.started' },
    ...items,
    {
      type: 'turn.completed',
      usage: {
        input_tokens: 10,
        cached_input_tokens: 0,
        cache_creation_tokens: 0,
        output_tokens: 5,
      },
    },
  ]
}

export function threadStarted(threadId: string): ThreadEvent {
  return { type: 'thread.started', thread_id: threadId }
}

export function threadCompleted(threadId: string, turns: number): ThreadEvent {
  return {
    type: 'thread.completed',
    thread_id: threadId,
    session_id: threadId,
    subtype: 'success',
    outcome_code: 'success',
    result: 'done',
    usage: { input_tokens: 0, cached_input_tokens: 0, cache_creation_tokens: 0, output_tokens: 0 },
    num_turns: turns,
  }
}
