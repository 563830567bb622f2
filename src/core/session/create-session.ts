import type { AgentState, OrientReason } from '../../contract/agent-state.ts'
import type { EngineState } from '../../contract/engine-state.ts'
import { ENGINE_STATE_VERSION } from '../../contract/engine-state.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { SessionStartSource } from '../../contract/hook-config.ts'
import type { KeptHookAnswer } from '../../contract/kept-hook-answers.ts'
import type { SessionConfig, SessionConfigInput } from '../../contract/session-config.ts'
import { readSessionConfig } from '../../contract/session-config.ts'
import { ZERO_USAGE } from '../../contract/usage.ts'
import type { SandboxPlacement } from '../../ports/sandbox-placement.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { assertCallbackAllowed } from '../callbacks/callback-policy.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { coordinatorId } from '../engine/with-lease.ts'
import { rememberCommittedState } from '../engine/writable-state.ts'
import { assertHooksAllowed } from '../hooks/http-hook.ts'
import { fireSessionStart } from '../hooks/turn-hooks.ts'
import { assertMcpAllowed } from '../mcp/mcp-servers.ts'
import { assertToolAllowed } from '../tools/http-tool-call.ts'
import { httpToolCatalog } from '../tools/tool-catalog.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import { inputKeeping, keepLongMessages } from '../turn/kept-input.ts'

/** Validates a create-session body (400 with every problem named). */
export function parseConfig(body: SessionConfigInput): SessionConfig {
  const config = readSessionConfig(body)
  httpToolCatalog(config.tools)
  return config
}

/**
 * Starts a session: its pointer, the `session_start` hooks, then batch 0 (thread.started, the
 * config in the engine state, an optional seed transcript, e.g. a fork's summary, and the hook
 * answers kept whole, `hook_answers`). The hooks run before the session exists, as in VT Code
 * they run while the session is set up, before its first turn: a session that exists has run
 * them and records what they kept, in the batch that creates it; a start that dies before batch
 * 0 leaves no session, and its retry runs them again (an answer kept twice is stored once).
 * Long: the first state, field by field, and the create-only first batch.
 */
export async function startSession(
  deps: ServiceDeps,
  locator: SessionLocator,
  tenant: string,
  config: SessionConfig,
  seed: {
    history?: HistoryMessage[]
    source: SessionStartSource
    placement?: SandboxPlacement
    /** A caller-chosen id (idempotent starts): creating it twice is a conflict. */
    sessionId?: string
    /** An automation run: the thread ends with the first turn that completes or fails. */
    endAfterTurn?: boolean
    /** Agent-layer state to start with (a handoff, the origin, a verifier role). */
    agent?: AgentState
    /** Keep the history's user texts over the inline limit as artifacts (a client's transcript). */
    keepLongTexts?: boolean
    /** Started in a request the platform bounds (Lambda): its start hooks stop before it ends. */
    timeLeft?: InvocationTimeLeft | undefined
  },
): Promise<SessionRef> {
  for (const tool of config.tools) assertToolAllowed(deps.tools, tool)
  assertHooksAllowed(deps.tools, config.hooks)
  assertCallbackAllowed(deps.callbacks?.policy, config.callback)
  assertMcpAllowed(deps.mcp, deps.tools, config)
  const now = deps.clock.now()
  const sessionId = seed.sessionId ?? newSessionId(now, deps.ids.token())
  const ref = { tenant, workspace: config.workspace, sessionId }
  const state: EngineState = {
    engine_version: ENGINE_STATE_VERSION,
    config,
    usage: { ...ZERO_USAGE },
    model_requests: 0,
    budget_warned: false,
    pricing_warned: false,
    item_counter: 0,
    turn_counter: 0,
    open_turn: null,
    recent_turns: [],
    ...(seed.endAfterTurn ? { end_after_turn: true } : {}),
    // The first new turn orients from the workspace's artifacts (the orient phase).
    agent: { orient_pending: orientReason(seed.source, seed.agent), ...seed.agent },
    ...(seed.placement
      ? {
          sandbox_placement: {
            session_id: seed.placement.sessionId,
            base_dir: seed.placement.baseDir,
          },
        }
      : {}),
  }
  // Before the session exists: a text refused by a cap leaves nothing behind.
  const history =
    seed.keepLongTexts && seed.history
      ? await keepLongMessages(seed.history, inputKeeping(deps, ref))
      : seed.history
  try {
    await locator.register(ref, new Date(now).toISOString())
  } catch (error) {
    // A chosen id whose pointer an earlier attempt left: batch 0 decides whether it exists.
    if (!(seed.sessionId && isTurnlineError(error, 'conflict'))) throw error
    await assertNotStarted(deps, ref)
  }
  // The session_start hooks run before batch 0, which records the answers they kept whole.
  const hookAnswers: KeptHookAnswer[] = []
  const warnings = await fireSessionStart(
    deps,
    ref,
    state,
    seed.source,
    (answer) => hookAnswers.push(answer),
    { timeLeft: seed.timeLeft },
  )
  const created = await deps.sessions.create(ref, sessionId, {
    events: [{ type: 'thread.started', thread_id: sessionId }],
    state,
    ...(history?.length ? { history: { append: history } } : {}),
    hookAnswers,
  })
  rememberCommittedState(created.snapshot.state)
  // One round trip for both where the coordinator pipelines (Upstash: commands of one tick).
  await Promise.all([
    touchActivity(deps, ref, Date.parse(created.snapshot.updatedAt)),
    recordTip(deps, ref, created.batch),
  ])
  if (warnings.length) serviceLog(deps)({ msg: 'session_start hooks', warnings })
  return ref
}

/**
 * A retried start of a session an earlier attempt created is the conflict batch 0's create-only
 * write would give, found before the `session_start` hooks run again.
 */
async function assertNotStarted(deps: ServiceDeps, ref: SessionRef): Promise<void> {
  const first = await deps.sessions.objects.get(deps.sessions.keys(ref).batch(0))
  if (first) throw new TurnlineError('conflict', `session ${ref.sessionId} already exists`)
}

/**
 * The new session enters the activity index (src/ports/activity-index.ts). Best effort: created,
 * it stays created; a listing fills in what the index lacks (src/store/activity-listing.ts).
 */
async function touchActivity(deps: ServiceDeps, ref: SessionRef, atMs: number): Promise<void> {
  const { tenant, workspace, sessionId } = ref
  await deps.coordinator
    .touchActivity({ tenant, workspace, sessionId, atMs })
    .catch((error: unknown) => {
      serviceLog(deps)({ msg: 'indexing a new session failed', error: String(error) })
    })
}

/**
 * The coordinator learns the session's tip (batch 0), so its first turn finds the snapshot this
 * process cached at creation named by `beginTurn` and trusts it, as every later turn does,
 * instead of probing the log (a LIST on S3). Best effort: without it the first turn probes.
 */
async function recordTip(deps: ServiceDeps, ref: SessionRef, batch: number): Promise<void> {
  await deps.coordinator.setTip(coordinatorId(ref), batch).catch((error: unknown) => {
    serviceLog(deps)({
      msg: 'recording the tip of a new session failed',
      error: String(error),
    })
  })
}

function orientReason(source: SessionStartSource, agent: AgentState | undefined): OrientReason {
  if (source === 'fork') return 'fork'
  return agent?.handoff ? 'handoff' : 'session_start'
}

/**
 * VT Code-like id: `session-<YYYYMMDDTHHMMSSZ>-<mmm><random hex>`, where `mmm` is the creation
 * millisecond (three decimal digits) and 13 random hex digits follow. Ids sort by creation time
 * to the millisecond.
 */
export function newSessionId(now: number, token: string): string {
  const iso = new Date(now).toISOString()
  const stamp = iso.replace(/[-:]/g, '').replace(/\.\d{3}/, '')
  return `session-${stamp}-${iso.slice(20, 23)}${token.slice(0, 13)}`
}
