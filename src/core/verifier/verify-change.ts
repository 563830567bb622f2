import type { EngineState } from '../../contract/engine-state.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HarnessItem } from '../../contract/thread-item.ts'
import type {
  VerificationResult,
  VerifyRequest,
  VerifyResponse,
} from '../../contract/verification.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { type AdmittedStep, admitStep } from '../engine/admit-step.ts'
import { respond } from '../engine/respond.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { completedError } from '../engine/turn-replay.ts'
import { TurnWriter } from '../engine/turn-writer.ts'
import { withLease } from '../engine/with-lease.ts'
import { sharedPlacement } from '../handoff/handoff-step.ts'
import type { TurnOptions } from '../session-api.ts'
import { runVerifier } from './run-verifier.ts'
import type { Verdict } from './verifier-prompt.ts'

/**
 * `POST /v1/sessions/:id/verify`. The proposed change is the named paths, or the files of a
 * turn's `file_change` items (default: the newest turn that changed files). A verifier
 * sub-agent (its own session: no shared transcript, no orientation, read-only sandbox tools in
 * the proposer's workspace, plan mode) re-reads the files and decides. The proposer's stream
 * gets two `harness` items — `verification_started` when the verifier starts and
 * `verification_passed` / `verification_failed` with the reasons — and its state records the
 * verdict on the change; a rejection is what the proposer's next turn starts with.
 */

interface ProposedChange {
  paths: string[]
  deleted: string[]
  turnId?: string
}

function proposedChange(state: EngineState, request: VerifyRequest): ProposedChange {
  const turns = state.agent?.changes ?? []
  const entry = request.turn_id ? turns.find((t) => t.turn_id === request.turn_id) : turns.at(-1)
  if (request.paths) {
    return {
      paths: request.paths,
      deleted: [],
      ...(entry && request.turn_id ? { turnId: entry.turn_id } : {}),
    }
  }
  if (!entry) {
    throw new TurnlineError(
      'conflict',
      request.turn_id
        ? `${request.turn_id} changed no files (or is older than the last 8 turns that did): pass "paths"`
        : 'no turn of this session changed files yet: pass "paths" to verify a change',
      { retryable: false },
    )
  }
  return {
    paths: entry.changes.map((c) => c.path),
    deleted: entry.changes.filter((c) => c.kind === 'delete').map((c) => c.path),
    turnId: entry.turn_id,
  }
}

const harnessItem = (
  deps: ServiceDeps,
  event: HarnessItem['event'],
  message: string,
  path: string | undefined,
  durationMs?: number,
) => ({
  type: 'item.completed' as const,
  item: {
    id: `harness-${deps.ids.uuid()}`,
    type: 'harness' as const,
    event,
    message,
    ...(path !== undefined ? { path } : {}),
    ...(durationMs !== undefined ? { duration_ms: durationMs } : {}),
  },
})

export function verifyChange(
  deps: ServiceDeps,
  locator: SessionLocator,
  ref: SessionRef,
  request: VerifyRequest,
  options: TurnOptions = {},
): Promise<VerifyResponse> {
  // One admitted step: its three parts and the verifier's turn run in its slot.
  return admitStep(deps, ref.tenant, undefined, (admitted) =>
    verify(deps, locator, ref, request, options, admitted),
  )
}

/** Long: the verify step's sequence under one lease. */
async function verify(
  deps: ServiceDeps,
  locator: SessionLocator,
  ref: SessionRef,
  request: VerifyRequest,
  options: TurnOptions,
  admitted: AdmittedStep,
): Promise<VerifyResponse> {
  const id = `verify-${deps.ids.token().slice(0, 12)}`
  const started = deps.clock.now()
  // 1. Under the proposer's lease: the change, and `verification_started` in its stream.
  let change: ProposedChange | undefined
  let proposer: EngineState | undefined
  const opening = await withLease(deps, ref, undefined, admitted, async (_lease, snapshot) => {
    if (snapshot.status === 'completed') throw completedError(ref)
    const state = structuredClone(parseEngineState(snapshot.state))
    if (state.open_turn) {
      throw new TurnlineError(
        'conflict',
        `${state.open_turn.turn_id} is still open: finish it (POST /turns) before verifying its change`,
      )
    }
    change = proposedChange(state, request)
    proposer = state
    const writer = new TurnWriter(deps, ref, snapshot, state, undefined, options.onEvent)
    writer.dispatcher.emit(
      harnessItem(
        deps,
        'verification_started',
        `${id}: an independent verifier reviews ${change.paths.join(', ')}`,
        change.paths[0],
      ),
    )
    return respond(deps, ref, writer, {
      turnId: lastTurn(state),
      status: 'completed',
      remember: false,
    })
  })
  if (!change || !proposer) throw new Error('unreachable: the lease work sets the change')

  // 2. The verifier sub-agent, outside the proposer's lease (it may take several model calls).
  const placement = sharedPlacement(deps, ref, proposer)
  const outcome = await runVerifier({
    deps,
    locator,
    proposer: ref,
    config: proposer.config,
    request,
    change,
    placement,
    admitted,
  })

  // 3. Under the lease again: the verdict in the stream and on the change; a rejection's reasons
  //    wait for the proposer's next turn.
  const verdict: Verdict = outcome.verdict
  const result: VerificationResult = {
    id,
    verdict: verdict.approved ? 'approved' : 'rejected',
    issues: verdict.issues,
    reasoning: verdict.reasoning,
    paths: change.paths,
    ...(change.turnId ? { turn_id: change.turnId } : {}),
    ...(outcome.sessionId ? { verifier_session: outcome.sessionId } : {}),
  }
  const final = await withLease(deps, ref, undefined, admitted, async (_lease, snapshot) => {
    const state = structuredClone(parseEngineState(snapshot.state))
    const writer = new TurnWriter(deps, ref, snapshot, state, undefined, options.onEvent)
    const message = verdictMessage(result)
    writer.dispatcher.emit(
      harnessItem(
        deps,
        verdict.approved ? 'verification_passed' : 'verification_failed',
        message,
        change?.paths[0],
        Math.max(0, deps.clock.now() - started),
      ),
    )
    state.agent ??= {}
    const record = {
      id,
      verdict: result.verdict,
      at: new Date(deps.clock.now()).toISOString(),
      ...(outcome.sessionId ? { verifier_session: outcome.sessionId } : {}),
    }
    state.agent.changes = (state.agent.changes ?? []).map((entry) =>
      entry.turn_id === change?.turnId ? { ...entry, verification: record } : entry,
    )
    if (!verdict.approved) {
      state.agent.feedback = [...(state.agent.feedback ?? []), rejectionFeedback(result)].slice(-16)
    }
    return respond(deps, ref, writer, {
      turnId: lastTurn(state),
      status: 'completed',
      remember: false,
    })
  })
  return {
    ...final,
    events: [...opening.events, ...final.events],
    verification: result,
  }
}

function lastTurn(state: EngineState): string {
  return `turn-${state.turn_counter}`
}

function verdictMessage(result: VerificationResult): string {
  const head = `${result.id}: ${result.verdict === 'approved' ? 'approved' : 'rejected'} the change to ${result.paths.join(', ')}`
  const issues = result.issues.map((issue) => `- ${issue}`)
  return [head, ...issues, ...(result.reasoning ? [`Reasoning: ${result.reasoning}`] : [])].join(
    '\n',
  )
}

/** What the proposer's next turn starts with after a rejection. */
function rejectionFeedback(result: VerificationResult): string {
  return [
    `[Verification] An independent verifier REJECTED your change${result.turn_id ? ` from ${result.turn_id}` : ''} to ${result.paths.join(', ')}.`,
    'Issues:',
    ...result.issues.map((issue) => `- ${issue}`),
    ...(result.reasoning ? ['', `Reasoning: ${result.reasoning}`] : []),
    '',
    'Revise the change to address these issues before going on.',
  ].join('\n')
}
