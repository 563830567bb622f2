import type { EngineState } from '../../contract/engine-state.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import type { HandoffRequest } from '../../contract/handoff.ts'
import type { HandoffResponse, HandoffRouteRequest } from '../../contract/handoff-request.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ProgressLedger } from '../../contract/progress-ledger.ts'
import type { SandboxPlacement } from '../../ports/sandbox-placement.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { writeArtifact } from '../artifacts/artifact-service.ts'
import { ArtifactStore } from '../artifacts/artifact-store.ts'
import { artifactStoreFor } from '../artifacts/workspace-artifacts.ts'
import { readMemoryEnvelope } from '../compaction/compaction-artifacts.ts'
import { hash16 } from '../compaction/segment-boundary.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { renderHandoffPrompt } from '../plan/handoff-prompt.ts'
import { parseConfig, startSession } from '../session/create-session.ts'
import { endSession } from '../session/end-session.ts'
import { readSessionEvents } from '../session/read-session-events.ts'
import { buildHandoff } from './build-handoff.ts'
import { sessionActivity } from './session-activity.ts'

/**
 * One path for every handoff: `POST …/handoff`, a fork and the plan → build reset all derive
 * the HandoffRequest from the session with {@link sessionHandoff}; the next agent reads it
 * rendered as `## HANDOFF FROM PREVIOUS AGENT` (in its orientation, or as the build turn's
 * directive). The route also stores it as the workspace's current handoff, can start the next
 * session with it (sharing the sandbox workspace, so the working tree carries over) and end
 * this one as VT Code's `handed_off`.
 */

export interface SessionHandoffInput {
  deps: ServiceDeps
  ref: SessionRef
  state: EngineState
  history: readonly HistoryMessage[]
  targetAgent: string
  overrides?: Partial<HandoffRouteRequest> | undefined
  /** The approved plan (plan → build). */
  plan?: string | undefined
  warnings: string[]
}

export async function sessionHandoff(input: SessionHandoffInput): Promise<HandoffRequest> {
  const { deps, ref, state, warnings } = input
  const [events, ledger, envelope] = await Promise.all([
    readSessionEvents(deps, ref),
    readLedger(deps, ref, warnings),
    state.compaction?.memory_envelope_path
      ? readMemoryEnvelope(deps.sessions.objects, state.compaction.memory_envelope_path, (e) =>
          warnings.push(`the memory envelope is unreadable: ${String(e)}`),
        )
      : Promise.resolve(undefined),
  ])
  const harness = state.config.harness
  const latest = state.agent?.changes?.at(-1)
  return buildHandoff({
    targetAgent: input.targetAgent,
    history: input.history,
    activity: sessionActivity(events, input.history),
    ledger,
    plan: input.plan,
    turns: state.turn_counter,
    modelRequests: state.model_requests,
    lastAnswer: state.last_assistant_text ?? undefined,
    lastFailure: state.last_failure ?? undefined,
    openTurn: openTurnIssue(state),
    rejectedChanges:
      latest?.verification?.verdict === 'rejected'
        ? [
            `A verifier rejected the change of ${latest.turn_id} (${latest.changes.map((c) => c.path).join(', ')}); it was not revised since.`,
          ]
        : [],
    openQuestions: envelope?.open_questions,
    objective: envelope?.objective,
    testCommand: input.overrides?.test_command ?? harness.test_command,
    testPattern: harness.test_command_pattern,
    overrides: input.overrides,
  })
}

function openTurnIssue(state: EngineState): string | undefined {
  const open = state.open_turn
  if (!open) return undefined
  const why = open.pending_permission
    ? `waits for approval of ${open.pending_permission.tool_name}`
    : open.waiting
      ? 'waits for a command that still runs'
      : 'was interrupted with tool calls unanswered'
  return `${open.turn_id} is still open: it ${why}.`
}

async function readLedger(
  deps: ServiceDeps,
  ref: SessionRef,
  warnings: string[],
): Promise<ProgressLedger | undefined> {
  try {
    return (await artifactStoreFor(deps, ref.tenant, ref.workspace).readLedger())?.ledger
  } catch (error) {
    if (!isTurnlineError(error, 'corrupt_data', 'unsupported_version')) throw error
    warnings.push(`the progress ledger is unreadable: ${error.message}`)
    return undefined
  }
}

/** The sandbox a session continuing this one works in: the same folder (placement) as this one. */
export function sharedPlacement(deps: ServiceDeps, ref: SessionRef, state: EngineState) {
  if (!deps.sandbox) return undefined
  const placed = state.sandbox_placement
  const placement: SandboxPlacement = placed
    ? { sessionId: placed.session_id, baseDir: placed.base_dir }
    : { sessionId: ref.sessionId, baseDir: '.' }
  return placement
}

/**
 * `POST /v1/sessions/:id/handoff`.
 * Long: the handoff's steps under one lease, in the order they commit.
 */
export async function handoffSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  ref: SessionRef,
  request: HandoffRouteRequest,
  idempotencyKey?: string,
): Promise<HandoffResponse> {
  const warnings: string[] = []
  const snapshot = await deps.sessions.open(ref)
  const state = parseEngineState(snapshot.state)
  const handoff = await sessionHandoff({
    deps,
    ref,
    state,
    history: snapshot.history,
    targetAgent: request.target_agent,
    overrides: request,
    warnings,
  })
  const now = deps.clock.now()
  const store = artifactStoreFor(deps, ref.tenant, ref.workspace)
  await writeArtifact(store, { kind: 'handoff', handoff }, { sessionId: ref.sessionId, now })
  const response: HandoffResponse = {
    handoff,
    prompt: renderHandoffPrompt(handoff),
    path: ArtifactStore.path('handoff'),
  }

  if (request.start) {
    const next = request.next_session ?? {}
    const config = parseConfig({
      ...state.config,
      ...(next.instructions !== undefined ? { instructions: next.instructions } : {}),
      ...(next.model !== undefined ? { model: next.model } : {}),
      ...(next.permissions !== undefined ? { permissions: next.permissions } : {}),
      ...(next.limits !== undefined ? { limits: next.limits } : {}),
      ...(next.metadata !== undefined ? { metadata: next.metadata } : {}),
    })
    const placement = sharedPlacement(deps, ref, state)
    const chosen = idempotencyKey
      ? `handoff-${await hash16(`${ref.sessionId}\n${idempotencyKey}`)}`
      : undefined
    let duplicate = false
    let sessionId = chosen
    try {
      const started = await startSession(deps, locator, ref.tenant, config, {
        source: 'startup',
        agent: { handoff, origin: { kind: 'handoff', session_id: ref.sessionId } },
        ...(placement ? { placement } : {}),
        ...(chosen ? { sessionId: chosen } : {}),
      })
      sessionId = started.sessionId
    } catch (error) {
      if (!(chosen && isTurnlineError(error, 'conflict'))) throw error
      duplicate = true
    }
    response.session = {
      session_id: sessionId as string,
      thread_id: sessionId as string,
      status: 'active',
      handed_off_from: ref.sessionId,
      ...(duplicate ? { duplicate } : {}),
    }
    await store
      .updateLedger((ledger) =>
        ledger
          ? {
              ...ledger,
              session_id: sessionId as string,
              previous_session_id: ref.sessionId,
              handoff_summary: handoff.state_summary.slice(0, 2000),
              updated_at: new Date(now).toISOString(),
            }
          : undefined,
      )
      .catch((error) => warnings.push(`the progress ledger was not updated: ${String(error)}`))
  }

  if (request.end_source && snapshot.status !== 'completed') {
    response.source_completion = await endSession(deps, ref, { handoff: request.target_agent })
  }
  return { ...response, ...(warnings.length ? { warnings } : {}) }
}
