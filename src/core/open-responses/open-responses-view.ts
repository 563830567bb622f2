import { responseRecordOf } from '../../contract/open-responses-record.ts'
import { endsResponseRun } from '../../contract/open-responses-run.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import type { ThreadEvent } from '../../contract/thread-event.ts'
import type { Usage } from '../../contract/usage.ts'
import type { OpenEnd, OpenResponsesView, ViewEvent } from '../session-api.ts'
import { OpenResponsesBridge } from './bridge.ts'
import { itemIdScope } from './item-ids.ts'
import { responseIdOf, responseSettingsOf } from './response-record.ts'
import { toOpenUsage } from './response-resource.ts'
import { OPEN_RESPONSES_DONE, openResponsesFrame } from './sse.ts'
import type { StreamEvent } from './types.ts'

function viewEvent(bridged: StreamEvent): ViewEvent {
  return { sequence: bridged.sequence_number, frame: openResponsesFrame(bridged), event: bridged }
}

/** The model a response reports when its session names none (the deployment default). */
const DEFAULT_MODEL_LABEL = 'default'

export interface ViewOptions {
  sessionId?: string
  now?: () => number
  extensions?: boolean
  /** The engine's reasoning tokens of the response (a stored one's), read as it ends. */
  reasoningTokens?: () => number | undefined
  /**
   * A live run: the turn's end (`turn.completed`, `turn.failed`, `thread.completed`) and what
   * follows it wait for `ending`, which brings the run's reasoning tokens (counted once its
   * last model answer is in), so the stream ends as a read of the stored response does.
   */
  holdEnd?: boolean
}

/**
 * The ThreadEvents of a live run from its turn's end on, held until the run has returned
 * (`holdEnd`); an `error` (the run failed after that end) lets them go first, as they stood.
 */
function endHolder(
  { holdEnd }: Pick<ViewOptions, 'holdEnd'>,
  bridged: (event: ThreadEvent) => ViewEvent[],
) {
  let held: ThreadEvent[] | undefined
  const release = (): ViewEvent[] => {
    const ended = held ?? []
    held = undefined
    return ended.flatMap(bridged)
  }
  const events = (event: ThreadEvent): ViewEvent[] => {
    if (!holdEnd || !(held || endsResponseRun(event))) return bridged(event)
    if (event.type === 'error') return [...release(), ...bridged(event)]
    held = [...(held ?? []), event]
    return []
  }
  return { events, release }
}

/**
 * The Open Responses view of one response session, event by event: what its config echoes
 * (settings and creation second from its response record), the bridge's events with their
 * sequence numbers and SSE frames. The response id is `resp_<session id>`; a live exec run
 * learns it from its first event (`thread.started`), a stored one is given it.
 */
export function openResponsesView(
  config: SessionConfig,
  options: ViewOptions = {},
): OpenResponsesView {
  const { settings, createdAt } = responseSettingsOf(config, DEFAULT_MODEL_LABEL)
  let reasoning: number | undefined
  const scoped = responseRecordOf(config)?.scoped_item_ids === true
  let bridge: OpenResponsesBridge | undefined
  const bridgeFor = (event: ThreadEvent) => {
    if (bridge) return bridge
    const sessionId =
      options.sessionId ?? (event.type === 'thread.started' ? event.thread_id : crypto.randomUUID())
    bridge = new OpenResponsesBridge({
      responseId: responseIdOf(sessionId),
      ...(scoped ? { itemIds: itemIdScope(sessionId) } : {}),
      settings,
      ...(createdAt === undefined ? {} : { createdAt }),
      ...(options.now ? { now: options.now } : {}),
      ...(options.extensions === undefined ? {} : { extensions: options.extensions }),
      endAtThread: true,
      reasoningTokens: () => reasoning ?? options.reasoningTokens?.(),
    })
    return bridge
  }
  const bridged = (event: ThreadEvent) => bridgeFor(event).push(event).map(viewEvent)
  const { events, release } = endHolder(options, bridged)
  const awaitClient = (usage?: Usage) =>
    (bridge?.awaitClient(usage && toOpenUsage(usage)) ?? []).map(viewEvent)
  const paused = (usage?: Usage) =>
    (bridge?.pause(usage && toOpenUsage(usage)) ?? []).map(viewEvent)
  const ending = (result: OpenEnd) => {
    reasoning = result.reasoning_tokens ?? reasoning
    if (result.status !== 'waiting') return release()
    return [...release(), ...(result.waitingOnClient ? awaitClient : paused)(result.usage)]
  }
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
