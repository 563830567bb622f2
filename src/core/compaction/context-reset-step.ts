import type { EngineState } from '../../contract/engine-state.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { TurnWriter } from '../engine/turn-writer.ts'
import { orientIfPending } from '../orientation/orient-step.ts'
import { compactionState } from './compact-transcript.ts'
import { readText, writeResetManifest } from './compaction-artifacts.ts'
import type { ContextResetTriggerKind } from './context-reset-policy.ts'
import { decideContextReset, renderContextResetManifest } from './context-reset-policy.ts'

/**
 * `harness.context_reset_mode` (VT Code §5): `on_compaction` after every automatic compaction,
 * `on_stall` after `context_reset_stall_threshold` consecutive failed turns. A reset writes the
 * Context Reset Manifest to the workspace's `.vtcode/tasks/current_context_reset.md` and marks
 * the state; the next turn then starts from orientation only — the `[Orientation Context]` of
 * every surviving artifact with the Context Reset banner and the manifest, in the system prompt —
 * followed by that turn's own messages. The manifest is consumed once the reset is committed.
 * No event is emitted.
 */

export interface ResetInput {
  deps: ServiceDeps
  ref: SessionRef
  state: EngineState
  writer: TurnWriter
  warnings: string[]
}

/** After an automatic compaction: writes the manifest when the mode is `on_compaction`. */
export async function resetAfterCompaction(input: ResetInput): Promise<boolean> {
  const harness = input.state.config.harness
  const decision = decideContextReset({
    mode: harness.context_reset_mode,
    compacted: true,
    stallCount: 0,
    stallThreshold: harness.context_reset_stall_threshold,
  })
  if (!decision.reset) return false
  await writeManifest(input, decision.trigger, decision.stallCount)
  return true
}

/** Counts consecutive failed turns; a completed turn starts the count over. */
export async function recordTurnForReset(
  input: ResetInput,
  end: 'completed' | 'failed' | 'other',
): Promise<void> {
  const compaction = compactionState(input.state)
  const harness = input.state.config.harness
  if (end === 'completed' || harness.context_reset_mode !== 'on_stall') {
    delete compaction.stall_count
    return
  }
  if (end !== 'failed') return
  const stalls = (compaction.stall_count ?? 0) + 1
  compaction.stall_count = stalls
  const decision = decideContextReset({
    mode: 'on_stall',
    compacted: false,
    stallCount: stalls,
    stallThreshold: harness.context_reset_stall_threshold,
  })
  if (!decision.reset) return
  await writeManifest(input, decision.trigger, decision.stallCount)
  delete compaction.stall_count
}

async function writeManifest(
  input: ResetInput,
  trigger: ContextResetTriggerKind,
  stallCount: number,
): Promise<void> {
  const { deps, ref } = input
  const manifest = {
    triggered_at: new Date(deps.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    trigger,
    stall_count: stallCount,
  }
  // The workspace's `.vtcode/tasks/current_context_reset.md`, as VT Code writes it.
  const root = deps.sessions.vtcodeRoot(ref.tenant, ref.workspace)
  const key = await writeResetManifest(deps.sessions.objects, root, manifest)
  compactionState(input.state).reset_manifest = key
  // The session keeps what it wrote: another session may consume or replace the file first.
  input.state.agent ??= {}
  input.state.agent.reset_manifest = renderContextResetManifest(manifest)
}

/**
 * Starts the turn from orientation: the orient phase runs again (reason `context_reset`) with
 * every surviving artifact — ledger, harness documents, loop memory, git log, this session's
 * last compaction summary, its handoff — and the manifest under the Context Reset banner,
 * frozen into the system prompt; the transcript keeps only the messages this turn added (from
 * `turnStart`). `commit` records it; then the manifest is deleted unless a newer reset replaced it.
 */
export async function applyOrientationReset(
  input: ResetInput,
  turnStart: number,
  commit: () => Promise<void>,
): Promise<void> {
  const { deps, writer, state } = input
  const compaction = compactionState(state)
  const key = compaction.reset_manifest
  if (!key) return
  const objects = deps.sessions.objects
  state.agent ??= {}
  const manifest = state.agent.reset_manifest ?? (await readText(objects, key)) ?? ''
  state.agent.reset_manifest = manifest
  state.agent.orient_pending = 'context_reset'
  await orientIfPending({ deps, ref: input.ref, state, warnings: input.warnings })
  writer.replaceHistory(writer.history.slice(turnStart))
  delete compaction.reset_manifest
  await commit()
  const current = await readText(objects, key)
  if (current !== undefined && current === manifest) await objects.delete(key)
}
