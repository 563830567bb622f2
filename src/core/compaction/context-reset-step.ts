import type { EngineState } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { TurnWriter } from '../engine/turn-writer.ts'
import { compactionState } from './compact-transcript.ts'
import { readMemoryEnvelope, readText, writeResetManifest } from './compaction-artifacts.ts'
import type { ContextResetTriggerKind } from './context-reset-policy.ts'
import { contextResetOrientation, decideContextReset } from './context-reset-policy.ts'

/**
 * `harness.context_reset_mode` (VT Code §5): `on_compaction` after every automatic compaction,
 * `on_stall` after `context_reset_stall_threshold` consecutive failed turns. A reset writes the
 * Context Reset Manifest into the session folder (`tasks/current_context_reset.md`) and marks the
 * state; the next turn then starts from orientation artifacts only — one system message with the
 * last compaction summary and the Context Reset banner plus the manifest — followed by that
 * turn's own messages. The manifest is deleted once the reset is committed. No event is emitted.
 */

export const ORIENTATION_HEADER = '[Orientation Context]'

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
  const key = await writeResetManifest(deps.sessions.objects, deps.sessions.keys(ref).root, {
    triggered_at: new Date(deps.clock.now()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    trigger,
    stall_count: stallCount,
  })
  compactionState(input.state).reset_manifest = key
}

/**
 * Starts the turn from orientation: the transcript becomes the orientation message plus the
 * messages this turn added (from `turnStart`); `commit` records it, then the manifest is deleted.
 */
export async function applyOrientationReset(
  input: ResetInput,
  turnStart: number,
  commit: () => Promise<void>,
): Promise<void> {
  const { deps, writer } = input
  const compaction = compactionState(input.state)
  const key = compaction.reset_manifest
  if (!key) return
  const objects = deps.sessions.objects
  const manifest = await readText(objects, key)
  const envelope = compaction.memory_envelope_path
    ? await readMemoryEnvelope(objects, compaction.memory_envelope_path, (error) =>
        input.warnings.push(`the memory envelope is unreadable: ${String(error)}`),
      )
    : undefined
  const kept = writer.history.slice(turnStart)
  writer.replaceHistory([orientationMessage(manifest, envelope?.summary), ...kept])
  delete compaction.reset_manifest
  await commit()
  await objects.delete(key)
}

export function orientationMessage(
  manifest: string | undefined,
  summary: string | undefined,
): HistoryMessage {
  const sections = [ORIENTATION_HEADER]
  if (summary?.trim()) sections.push(`### Previous Session Summary\n${summary.trim()}`)
  sections.push(contextResetOrientation(manifest?.trim() ?? '').trimEnd())
  return { role: 'system', content: sections.join('\n\n') }
}
