import type { CreateSessionResponse } from '../../contract/api.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ForkRequest } from '../../contract/route-bodies.ts'
import type { SandboxPlacement } from '../../ports/sandbox-placement.ts'
import { SessionImages } from '../../store/session-images.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'
import { snapshotAfterTurn } from '../../store/snapshot-after-turn.ts'
import { trimIncompleteTail } from '../compaction/protocol-groups.ts'
import { isMemoryEnvelopeMessage } from '../compaction/render-envelope.ts'
import { admitStep } from '../engine/admit-step.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { sessionHandoff } from '../handoff/handoff-step.ts'
import { admittedModel } from '../model/admitted-model.ts'
import { sessionPrice } from '../model/budget.ts'
import { requestSettings, resolveModelSettings } from '../model/model-settings.ts'
import { sessionSandbox } from '../sandbox/session-sandbox.ts'
import { startSession } from './create-session.ts'
import { buildSummarizedForkHistory, forkSummaryRequest, savedSummary } from './fork-history.ts'

/**
 * Forks a session: a new session (same settings) seeded with the source's summarized history —
 * its memory envelope (after a compaction), the saved compaction summary when there is one (no
 * model call) else one summary call, plus its newest user messages (≤ 4), and no continuity tail
 * — or, `at_turn`, with the transcript exactly as that turn left it. The source is only read.
 * A fork is a step of its tenant's work (admitted like a turn); its summary call is reserved and
 * charged like any model call, so a tenant over quota gets 429 before the model is asked.
 */
export function forkSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  source: SessionRef,
  options: ForkRequest = {},
): Promise<CreateSessionResponse & { forked_from: string }> {
  return admitStep(deps, source.tenant, undefined, () => fork(deps, locator, source, options))
}

async function fork(
  deps: ServiceDeps,
  locator: SessionLocator,
  source: SessionRef,
  options: ForkRequest,
): Promise<CreateSessionResponse & { forked_from: string }> {
  const snapshot = await deps.sessions.open(source)
  const state = parseEngineState(snapshot.state)
  const history = trimIncompleteTail(
    options.at_turn === undefined
      ? snapshot.history
      : await transcriptAfterTurn(deps, source, snapshot, options.at_turn),
  ).messages
  // At a chosen turn: the transcript as that turn left it, verbatim; otherwise summarized.
  const seed =
    options.at_turn === undefined ? await summarizedHistory(deps, source, state, history) : history
  let placement: SandboxPlacement | undefined
  if (options.isolation === 'worktree') {
    if (!deps.sandbox) {
      throw new TurnlineError(
        'invalid_input',
        'isolation "worktree" needs a sandbox runner (TURNLINE_RUNNER_URL)',
      )
    }
    // The sub-agent's mutations stay in its own worktree of the source's workspace until merged.
    placement = await sessionSandbox(deps.sandbox).isolate(
      source,
      `fork-${deps.ids.token().slice(0, 12)}`,
    )
  }
  // The same handoff a `POST …/handoff` derives, shown in the fork's orientation.
  const handoff = await sessionHandoff({
    deps,
    ref: source,
    state,
    history,
    targetAgent: 'fork',
    warnings: [],
  })
  const config = options.limits
    ? { ...state.config, limits: { ...state.config.limits, ...options.limits } }
    : state.config
  // The source's stored images go in loaded: the fork stores them in its own folder.
  const images = new SessionImages(deps.sessions.objects, deps.sessions.keys(source).root)
  const ref = await startSession(deps, locator, source.tenant, config, {
    source: 'fork',
    history: await images.loadMessages(seed),
    ...(placement ? { placement } : {}),
    agent: { handoff, origin: { kind: 'fork', session_id: source.sessionId } },
  })
  return {
    session_id: ref.sessionId,
    thread_id: ref.sessionId,
    status: 'active',
    forked_from: source.sessionId,
  }
}

/** The transcript as turn `n` of the source left it (store/snapshot-after-turn.ts). */
async function transcriptAfterTurn(
  deps: ServiceDeps,
  source: SessionRef,
  snapshot: SessionSnapshot,
  n: number,
): Promise<HistoryMessage[]> {
  const { objects } = deps.sessions
  const keys = deps.sessions.keys(source)
  const after = await snapshotAfterTurn(objects, keys, source, snapshot, `turn-${n}`)
  return after.history
}

/**
 * The source's history summarized: its memory envelope (the newest, after a compaction) first,
 * the saved compaction summary or one summary call, its newest user messages.
 */
async function summarizedHistory(
  deps: ServiceDeps,
  source: SessionRef,
  state: ReturnType<typeof parseEngineState>,
  history: HistoryMessage[],
): Promise<HistoryMessage[]> {
  const envelope = history.findLast(isMemoryEnvelopeMessage)
  const summary = savedSummary(history) ?? (await summarize(deps, source, state.config, history))
  return buildSummarizedForkHistory({ history, summary, ...(envelope ? { envelope } : {}) })
}

async function summarize(
  deps: ServiceDeps,
  source: SessionRef,
  config: ReturnType<typeof parseEngineState>['config'],
  history: Parameters<typeof forkSummaryRequest>[0],
): Promise<string> {
  if (history.length === 0) return '(the source session had no conversation yet)'
  const settings = resolveModelSettings(config.model, deps.defaults)
  if (!settings) {
    throw new TurnlineError(
      'model_not_configured',
      'forking needs one summary call and no model is configured: set OPENAI_API_KEY and TURNLINE_MODEL, or pass "model"',
    )
  }
  const messages = forkSummaryRequest(history)
  const request = {
    model: settings.name,
    api: settings.api,
    messages: config.instructions
      ? [{ role: 'system' as const, content: config.instructions }, ...messages]
      : messages,
    tools: [],
    ...requestSettings(settings),
  }
  const owner = {
    deps,
    tenant: source.tenant,
    sessionId: source.sessionId,
    workspace: source.workspace,
    price: sessionPrice(settings),
  }
  for await (const event of admittedModel(owner, `fork-${deps.ids.token()}`).stream(request)) {
    if (event.type === 'completed') return event.response.text.trim() || '(empty summary)'
  }
  throw new TurnlineError('model_error', 'the summary call ended without a response', {
    details: { kind: 'server' },
  })
}
