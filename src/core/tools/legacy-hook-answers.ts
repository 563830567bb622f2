import type { Batch } from '../../contract/batch.ts'
import { readableHookAnswers } from '../../contract/kept-hook-answers.ts'
import type { ThreadItem } from '../../contract/thread-item.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import { readBatchPage } from '../../store/batch-pages.ts'
import type { SessionKeys } from '../../store/session-ref.ts'

/** Whether a version-1 `outputs/<id>.json` descriptor is a hook's answer hidden from the model. */
export type LegacyHookAnswers = (id: string) => Promise<boolean>

/**
 * Hook answers kept before they were hidden from the model. Until descriptor version 2 every
 * artifact's descriptor went to `outputs/<id>.json`, where `read_tool_output` looks, a hook's
 * answer included; such a (version 1) descriptor is served to the model only when it is not one
 * of the hook answers the session's batches record (`hook_answers`) — or when a deny named it:
 * the batch that rejected the call ended its invocation `hook_denied` and gave the model a tool
 * message naming the artifact. That message is the server's rejection made of the hook's reason
 * (no tool ran that could have written it), so a tool's output quoting an id names nothing.
 *
 * Reads every batch of the session once, on the first version-1 descriptor a turn's reads meet:
 * only sessions that kept outputs before version 2 have any.
 */
export function legacyHookAnswers(
  objects: ObjectStore,
  keys: SessionKeys,
  /** The session's last committed batch, when the first such read comes. */
  lastBatch: () => number,
): LegacyHookAnswers {
  let hidden: Promise<Set<string>> | undefined
  return async (id) => {
    if (!hidden) {
      hidden = hiddenAnswers(objects, keys, lastBatch())
      hidden.catch(() => {
        hidden = undefined // a failed read is tried again by the next call
      })
    }
    return (await hidden).has(id)
  }
}

async function hiddenAnswers(
  objects: ObjectStore,
  keys: SessionKeys,
  lastBatch: number,
): Promise<Set<string>> {
  const kept = new Set<string>()
  const named = new Set<string>()
  // No entry is ever returned, so one page reads the log to its end.
  await readBatchPage(objects, keys, lastBatch, { limit: 1 }, async (batch) => {
    for (const answer of readableHookAnswers(batch.hook_answers)) {
      const call = answer.tool_call_id
      const byDeny = call !== undefined && deniedNaming(batch, call, answer.artifact_id)
      ;(byDeny ? named : kept).add(answer.artifact_id)
    }
    return []
  })
  for (const id of named) kept.delete(id)
  return kept
}

/** True when the batch rejected call `toolCallId` by a hook with words naming `artifactId`. */
function deniedNaming(batch: Batch, toolCallId: string, artifactId: string): boolean {
  let denied = false
  let told = false
  for (const { event } of batch.events) {
    if (event.type !== 'item.completed') continue
    const item = event.item as ThreadItem
    if (item.type === 'tool_invocation' && item.tool_call_id === toolCallId) {
      denied = item.outcome === 'hook_denied'
    }
    if (item.type === 'tool_output' && item.tool_call_id === toolCallId) {
      told ||= item.output.includes(artifactId)
    }
  }
  for (const message of batch.history?.append ?? []) {
    if (message.role !== 'tool' || message.tool_call_id !== toolCallId) continue
    if (typeof message.content === 'string') told ||= message.content.includes(artifactId)
  }
  return denied && told
}
