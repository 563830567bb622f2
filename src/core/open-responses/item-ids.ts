import type { Draft, ItemIdScope } from './bridge-state.ts'
import type { OutputItem, ResponseObject } from './types.ts'

/**
 * The id a response shows for one of its output items. The engine numbers a session's items
 * `item_<n>` from 0, and each response is a session of its own, so those ids repeat from one
 * response to the next; a response whose record says `scoped_item_ids` shows
 * `<engine id>_<session id>`, unique across responses and the same at every read of the same
 * response. A response recorded before keeps the engine's ids, as it was first shown.
 */
export function itemIdScope(sessionId: string): ItemIdScope {
  return (engineId) => `${engineId}_${sessionId}`
}

/** A copy of a response, its output items with their shown ids. */
export function shownResponse(response: ResponseObject, scope?: ItemIdScope): ResponseObject {
  const copy = structuredClone(response)
  if (scope) copy.output = copy.output.map((item) => scopedItem(item, scope))
  return copy
}

/** An event as sent: its `item_id` and its `item`'s id shown (its `response` is already). */
export function shownDraft(draft: Draft, scope?: ItemIdScope): Draft {
  if (!scope) return draft
  const shown: Record<string, unknown> = { ...draft }
  if (typeof shown.item_id === 'string') shown.item_id = scope(shown.item_id)
  if ('item' in draft && draft.item) shown.item = scopedItem(draft.item as OutputItem, scope)
  return shown as Draft
}

function scopedItem(item: OutputItem, scope: ItemIdScope): OutputItem {
  return { ...item, id: scope(item.id) }
}
