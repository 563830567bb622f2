import type { SessionConfig } from '../../contract/session-config.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { Usage } from '../../contract/usage.ts'
import type { OpenEnd, OpenResponsesView, ViewEvent } from '../session-api.ts'
import { OpenResponsesBridge, toOpenUsage } from './bridge.ts'
import { responseIdOf, responseSettingsOf } from './response-record.ts'
import { OPEN_RESPONSES_DONE, openResponsesFrame } from './sse.ts'
import type { StreamEvent } from './types.ts'

function viewEvent(bridged: StreamEvent): ViewEvent {
  return { sequence: bridged.sequence_number, frame: openResponsesFrame(bridged), event: bridged }
}

/** The model a response reports when its session names none (the deployment default). */
const DEFAULT_MODEL_LABEL = 'default'

/**
 * The Open Responses view of one response session, event by event: what its config echoes
 * (settings and creation second from its response record), the bridge's events with their
 * sequence numbers and SSE frames. The response id is `resp_<session id>`; a live exec run
 * learns it from its first event (`thread.started`), a stored one is given it.
 */
export function openResponsesView(
  config: SessionConfig,
  options: { sessionId?: string; now?: () => number; extensions?: boolean } = {},
): OpenResponsesView {
  const { settings, createdAt } = responseSettingsOf(config, DEFAULT_MODEL_LABEL)
  let bridge: OpenResponsesBridge | undefined
  const bridgeFor = (event: ThreadEvent) => {
    bridge ??= new OpenResponsesBridge({
      responseId: responseIdOf(
        options.sessionId ??
          (event.type === 'thread.started' ? event.thread_id : crypto.randomUUID()),
      ),
      settings,
      ...(createdAt === undefined ? {} : { createdAt }),
      ...(options.now ? { now: options.now } : {}),
      ...(options.extensions === undefined ? {} : { extensions: options.extensions }),
      endAtThread: true,
    })
    return bridge
  }
  const awaitClient = (usage?: Usage) =>
    (bridge?.awaitClient(usage && toOpenUsage(usage)) ?? []).map(viewEvent)
  const paused = (usage?: Usage) =>
    (bridge?.pause(usage && toOpenUsage(usage)) ?? []).map(viewEvent)
  const ending = (result: OpenEnd) =>
    result.status !== 'waiting'
      ? []
      : result.waitingOnClient
        ? awaitClient(result.usage)
        : paused(result.usage)
  const events = (event: ThreadEvent) => bridgeFor(event).push(event).map(viewEvent)
  return {
    events,
    frames: (event) =>
      events(event)
        .map((e) => e.frame)
        .join(''),
    get response() {
      return bridge?.response
    },
    done: OPEN_RESPONSES_DONE,
    awaitClient: (usage) =>
      awaitClient(usage)
        .map((e) => e.frame)
        .join(''),
    awaitClientEvents: awaitClient,
    ending: (result) =>
      ending(result)
        .map((e) => e.frame)
        .join(''),
    endingEvents: ending,
  }
}
