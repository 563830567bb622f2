import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import type { SessionKeys } from '../../store/session-ref.ts'
import { OpenResponsesBridge } from './bridge.ts'
import type { ItemIdScope } from './bridge-state.ts'
import { openResponsesStream } from './sse.ts'
import type { ResponseSettings } from './types.ts'

export interface OpenResponsesViewOptions {
  /** Default `resp_<thread id>`, so a rebuilt view keeps its id. */
  responseId?: string
  settings?: Partial<ResponseSettings>
  createdAt?: number
  now?: () => number
  /** The ids its output items are shown with (a response recorded with `scoped_item_ids`). */
  itemIds?: ItemIdScope
  /** The reasoning tokens its usage reports (the session's state's). */
  reasoningTokens?: number
}

/** Key of a session's Open Responses view: `<session root>derived/open-responses.jsonl`. */
export function openResponsesViewKey(keys: SessionKeys): string {
  return `${keys.root}derived/open-responses.jsonl`
}

/** The Open Responses view of a whole thread: every bridged event SSE-framed, then `[DONE]`. */
export function openResponsesViewText(
  events: readonly ParsedThreadEvent[],
  options: OpenResponsesViewOptions = {},
): string {
  const threadId = events.find((event) => event.type === 'thread.started')?.thread_id
  const bridge = new OpenResponsesBridge({
    responseId: options.responseId ?? `resp_${threadId ?? 'thread'}`,
    settings: options.settings,
    createdAt: options.createdAt,
    now: options.now,
    itemIds: options.itemIds,
    reasoningTokens: () => options.reasoningTokens,
  })
  return openResponsesStream(events.flatMap((event) => bridge.push(event)))
}

/**
 * Writes (replaces) the derived Open Responses view of a session. It is rebuilt from the
 * thread's events, so a plain PUT is enough: call it after `thread.completed` is committed.
 */
export async function writeOpenResponsesView(
  store: ObjectStore,
  keys: SessionKeys,
  events: readonly ParsedThreadEvent[],
  options: OpenResponsesViewOptions = {},
): Promise<{ key: string; bytes: number }> {
  const key = openResponsesViewKey(keys)
  const body = new TextEncoder().encode(openResponsesViewText(events, options))
  await store.put(key, body, { contentType: 'text/event-stream; charset=utf-8' })
  return { key, bytes: body.length }
}
