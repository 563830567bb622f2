import type { AgentState, FrozenOrientation, OrientReason } from '../../contract/agent-state.ts'
import type { ArtifactKind } from '../../contract/artifacts.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { artifactStoreFor } from '../artifacts/workspace-artifacts.ts'
import { hash16 } from '../compaction/segment-boundary.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { placedRunner } from '../sandbox/placed-runner.ts'
import { type GatheredOrientation, gatherOrientation } from './gather-orientation.ts'
import { type OrientationField, renderOrientation } from './orientation-context.ts'
import { recentGitLog } from './workspace-git.ts'

/**
 * The orient phase of a session (VT Code §Orient Phase): before the first model request of a
 * session start, a fork, a handoff, a context reset or a plan handoff, the orientation is
 * gathered from the workspace, rendered within `harness.orientation_token_budget` and frozen in
 * the engine state, where the system prompt (and so the request segment's prefix hash) carries
 * it until the next orient phase. A verifier sub-agent and `orientation_enabled: false` skip it.
 */

const FIELD_KINDS: Readonly<Record<OrientationField | 'handoff', ArtifactKind | 'git'>> = {
  progress_summary: 'progress',
  spec_summary: 'spec',
  contract_summary: 'contract',
  sprint_contract_summary: 'sprint_contract',
  evaluation_summary: 'evaluation',
  outcome_verification_summary: 'outcome_verification',
  recent_git_log: 'git',
  loop_notes: 'notes',
  loop_decisions: 'decisions',
  compaction_summary: 'compaction_summary',
  feature_list_summary: 'feature_list',
  context_reset_manifest: 'context_reset',
  handoff: 'handoff',
}

export function agentState(state: EngineState): AgentState {
  state.agent ??= {}
  return state.agent
}

export interface OrientInput {
  deps: ServiceDeps
  ref: SessionRef
  state: EngineState
  warnings: string[]
}

/** Gathers and renders the orientation without freezing it (`GET …/orientation?preview=1`). */
export async function buildOrientation(
  input: OrientInput,
  reason: OrientReason,
): Promise<{ frozen: FrozenOrientation; gathered: GatheredOrientation }> {
  const { deps, ref, state, warnings } = input
  const harness = state.config.harness
  const agent = state.agent ?? {}
  const gathered = await gatherOrientation({
    store: artifactStoreFor(deps, ref.tenant, ref.workspace),
    gitLog: gitLogFor(input),
    handoff: agent.handoff,
    withoutHandoff: reason === 'plan_handoff',
    resetManifest: reason === 'context_reset' ? agent.reset_manifest : undefined,
    artifactTools: harness.artifact_tools,
    warnings,
  })
  const rendered = renderOrientation(gathered.context, {
    budget: harness.orientation_token_budget,
    reference: (field) => gathered.reference(FIELD_KINDS[field]),
  })
  const frozen: FrozenOrientation = {
    text: rendered.text,
    digest: await hash16(rendered.text),
    tokens: rendered.tokens,
    budget: harness.orientation_token_budget,
    reason,
    built_at: new Date(deps.clock.now()).toISOString(),
    sections: rendered.sections,
    ...(rendered.trimmed.length ? { trimmed: rendered.trimmed } : {}),
  }
  return { frozen, gathered }
}

/**
 * Runs the pending orient phase, if any: freezes the orientation into the state (the caller
 * commits it) and consumes a workspace reset manifest it showed. Returns whether it ran.
 */
export async function orientIfPending(input: OrientInput): Promise<boolean> {
  const { state } = input
  const reason = state.agent?.orient_pending
  if (!reason) return false
  const agent = agentState(state)
  delete agent.orient_pending
  if (!state.config.harness.orientation_enabled || agent.role === 'verifier') {
    delete agent.orientation
    return false
  }
  const { frozen, gathered } = await buildOrientation(input, reason)
  agent.orientation = frozen
  if (reason === 'context_reset') delete agent.reset_manifest
  const shown = gathered.workspaceManifest
  if (shown) await consumeManifest(input, shown)
  return true
}

/** Deletes the workspace's reset manifest once shown, unless another reset rewrote it since. */
async function consumeManifest(input: OrientInput, shown: { etag: string }): Promise<void> {
  const store = artifactStoreFor(input.deps, input.ref.tenant, input.ref.workspace)
  const current = await store.readText('context_reset')
  if (current?.etag === shown.etag) await store.delete('context_reset')
}

function gitLogFor(input: OrientInput): (() => Promise<string | undefined>) | undefined {
  const runner = input.deps.sandbox?.runner
  if (!runner) return undefined
  const placed = input.state.sandbox_placement
  const sandbox = placed
    ? placedRunner(runner, { sessionId: placed.session_id, baseDir: placed.base_dir })
    : runner
  const scope = { tenant: input.ref.tenant, sessionId: input.ref.sessionId }
  return () =>
    recentGitLog(sandbox, scope, `orient-${input.deps.ids.uuid()}`, (message) =>
      input.warnings.push(`orientation: ${message}`),
    )
}
