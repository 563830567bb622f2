import type { EngineState } from '../../contract/engine-state.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { contextWindowOf } from '../model/context-window.ts'
import type { ResolvedModelSettings } from '../model/model-settings.ts'
import { orientationDigest, systemPrompt } from '../orientation/system-prompt.ts'
import { tokenizerForModel } from './bpe-tokenizer.ts'
import { ContextMeter } from './context-meter.ts'
import type { SegmentBasis } from './segment-boundary.ts'
import { compactionThresholds } from './thresholds.ts'

/**
 * What a compaction of the session measures against, in a turn (turn-compaction.ts) or asked for
 * by hand (manual-compaction.ts): the request segment's basis (system prompt, instructions,
 * orientation, tools, model, provider, mode), the thresholds for the model's context window, and
 * the meter that counts the transcript from the provider's last count.
 */
export function segmentBasis(
  state: EngineState,
  settings: ResolvedModelSettings,
  tools: readonly ToolDefinition[],
): SegmentBasis {
  const instructions = state.config.instructions ?? ''
  return {
    systemPrompt: systemPrompt(state),
    instructions,
    orientationDigest: orientationDigest(state),
    tools,
    model: settings.name,
    provider: `openai:${settings.api}`,
    mode: state.permission_mode ?? state.config.permissions.mode,
  }
}

export function thresholdsFor(state: EngineState, settings: ResolvedModelSettings) {
  const harness = state.config.harness
  return compactionThresholds({
    autoCompactionThresholdTokens: harness.auto_compaction_threshold_tokens,
    maxContextTokens: harness.max_context_tokens,
    providerCapacity: contextWindowOf(settings),
  })
}

export function meterFor(deps: ServiceDeps, state: EngineState, settings: ResolvedModelSettings) {
  return new ContextMeter(
    deps.tokenizer ?? tokenizerForModel,
    settings.name,
    state.compaction?.usage_anchor,
  )
}
