import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { OpenResponsesView } from '../session-api.ts'
import { OpenResponsesBridge } from './bridge.ts'
import { OPEN_RESPONSES_DONE, openResponsesFrame } from './sse.ts'

/**
 * The Open Responses view of one exec run, event by event. The response id is
 * `resp_<thread id>` (from the first event, `thread.started`), the same id the session's
 * derived view uses.
 */
export function openResponsesView(model: string): OpenResponsesView {
  let bridge: OpenResponsesBridge | undefined
  return {
    frames(event: ThreadEvent): string {
      bridge ??= new OpenResponsesBridge({
        responseId: `resp_${event.type === 'thread.started' ? event.thread_id : crypto.randomUUID()}`,
        model,
      })
      return bridge.push(event).map(openResponsesFrame).join('')
    },
    get response() {
      return bridge?.response
    },
    done: OPEN_RESPONSES_DONE,
  }
}
