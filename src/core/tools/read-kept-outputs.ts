import type { Batch } from '../../contract/batch.ts'
import { readableHookAnswers } from '../../contract/kept-hook-answers.ts'
import type {
  KeptHookOutput,
  KeptOutput,
  KeptOutputEntry,
  KeptOutputList,
} from '../../contract/kept-output-list.ts'
import type { ThreadItem } from '../../contract/thread-item.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import { parseJsonObject } from '../../shared/json-object.ts'
import { readBatchPage } from '../../store/batch-pages.ts'
import type { OutputArtifacts } from '../../store/output-artifacts.ts'
import type { SessionKeys } from '../../store/session-ref.ts'
import { READ_OUTPUT_TOOL } from './read-output-tool.ts'

const ID = /^out_[0-9a-f]{32}$/
/** How a preview (output-preview.ts) and a hook's note (hook-artifact.ts) name an artifact. */
const NAMED = /\bkept (?:whole )?as artifact (out_[0-9a-f]{32})\b/

/**
 * The artifact a tool message names as holding the answer whole: a command's answer (a JSON
 * object, exec-response.ts) in its own field `output_artifact_id` — never in the command's
 * text, which is a string inside it; any other answer in the notice of its preview or of a
 * hook's note.
 */
export function keptArtifactIdOf(content: string): string | undefined {
  const value = parseJsonObject(content)
  if (value) {
    const id = value.output_artifact_id
    return typeof id === 'string' && ID.test(id) ? id : undefined
  }
  // not a JSON object: a text answer, read for a notice
  return NAMED.exec(content)?.[1]
}

type ToolOutputItem = Extract<ThreadItem, { type: 'tool_output' }>

/**
 * The kept outputs a batch recorded: each `tool_output` item completed in it, paired with the
 * tool message the model got for the same call (both are committed by one batch), when that
 * message names an artifact the session holds; then the hook answers it kept (`hook_answers`).
 * A `pre_tool_use` hook's deny names its kept answer in the tool message: the batch lists it
 * once, as the hook's.
 */
async function keptOutputsOf(batch: Batch, outputs: OutputArtifacts): Promise<KeptOutputEntry[]> {
  const hooks = await keptHookOutputsOf(batch, outputs)
  const byHooks = new Set(hooks.map((hook) => hook.artifact_id))
  const tools = await keptToolOutputsOf(batch, outputs)
  return [...tools.filter((tool) => !byHooks.has(tool.artifact_id)), ...hooks]
}

/** The hook answers a batch kept whole, each whose artifact the session holds. */
async function keptHookOutputsOf(
  batch: Batch,
  outputs: OutputArtifacts,
): Promise<KeptHookOutput[]> {
  const found: KeptHookOutput[] = []
  for (const answer of readableHookAnswers(batch.hook_answers)) {
    if (!(await outputs.describe(answer.artifact_id))) continue
    found.push({
      kind: 'hook_answer',
      seq: batch.first_seq + batch.events.length - 1,
      ...(batch.turn_id !== undefined ? { turn_id: batch.turn_id } : {}),
      ...answer,
    })
  }
  return found
}

async function keptToolOutputsOf(batch: Batch, outputs: OutputArtifacts): Promise<KeptOutput[]> {
  const messages = new Map<string, string>()
  for (const message of batch.history?.append ?? []) {
    if (message.role === 'tool') messages.set(message.tool_call_id, message.content)
  }
  const toolNames = new Map<string, string>()
  const done: { seq: number; item: ToolOutputItem }[] = []
  batch.events.forEach(({ event }, i) => {
    if (event.type !== 'item.completed') return
    const item = event.item as ThreadItem
    if (item.type === 'tool_invocation') toolNames.set(item.id, item.tool_name)
    if (item.type === 'tool_output') done.push({ seq: batch.first_seq + i, item })
  })
  const found: KeptOutput[] = []
  for (const { seq, item } of done) {
    const toolName = toolNames.get(item.call_id)
    // A page read from an artifact may quote any text: it keeps nothing itself.
    if (toolName === READ_OUTPUT_TOOL) continue
    const content = item.tool_call_id === undefined ? undefined : messages.get(item.tool_call_id)
    const id = content === undefined ? undefined : keptArtifactIdOf(content)
    const artifact = id === undefined ? null : await outputs.describe(id)
    if (!artifact) continue
    found.push({
      kind: 'tool_output',
      seq,
      item_id: item.id,
      call_id: item.call_id,
      ...(item.tool_call_id !== undefined ? { tool_call_id: item.tool_call_id } : {}),
      ...(toolName !== undefined ? { tool_name: toolName } : {}),
      ...(batch.turn_id !== undefined ? { turn_id: batch.turn_id } : {}),
      artifact_id: artifact.id,
      size: artifact.size,
      lines: artifact.lines,
    })
  }
  return found
}

/**
 * `GET /v1/sessions/{id}/artifacts`: a page of the tool outputs the session kept whole, by the
 * call that answered each, derived from the batches (kept-output-list.ts in src/contract says
 * why no event carries it).
 */
export async function readKeptOutputs(
  objects: ObjectStore,
  keys: SessionKeys,
  outputs: OutputArtifacts,
  lastBatch: number,
  options: { cursor?: string; limit: number },
): Promise<KeptOutputList> {
  const page = await readBatchPage(objects, keys, lastBatch, options, (batch) =>
    keptOutputsOf(batch, outputs),
  )
  return {
    outputs: page.entries,
    ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    ...(page.through >= 0 ? { resume: String(page.through) } : {}),
  }
}

/**
 * Every hook answer the session kept whole, oldest first, each whose artifact it holds: for the
 * exports that name them (the ATIF trajectory). Reads every batch once.
 */
export async function readKeptHookAnswers(
  objects: ObjectStore,
  keys: SessionKeys,
  outputs: OutputArtifacts,
  lastBatch: number,
): Promise<KeptHookOutput[]> {
  const found: KeptHookOutput[] = []
  for (let cursor: string | undefined; ; ) {
    const page = await readBatchPage(
      objects,
      keys,
      lastBatch,
      { ...(cursor !== undefined ? { cursor } : {}), limit: 200 },
      (batch) => keptHookOutputsOf(batch, outputs),
    )
    found.push(...page.entries)
    if (page.cursor === undefined) return found
    cursor = page.cursor
  }
}
