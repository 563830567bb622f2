import type { EngineCompaction, EngineState } from '../../contract/engine-state.ts'
import type { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { noTelemetry } from '../../ports/telemetry.ts'
import { writeCompactionSummary } from '../artifacts/workspace-artifacts.ts'
import { preCompactPayload } from '../hooks/hook-payloads.ts'
import { hookWarnings, runHooks } from '../hooks/run-hooks.ts'
import { fireSessionStart } from '../hooks/turn-hooks.ts'
import { retainedUserMessages } from '../session/fork-history.ts'
import { hookContext, hookDeps } from '../turn/turn-tools.ts'
import { retainArchivesQuietly } from './archive-retention.ts'
import { buildMemoryEnvelope } from './build-envelope.ts'
import { persistCompactionArtifacts, readMemoryEnvelope } from './compaction-artifacts.ts'
import { produceCompaction } from './compaction-modes.ts'
import type { CompactionOutcome, CompactionRequest, CompactionRun } from './compaction-run.ts'
import {
  CONTINUITY_TAIL_TARGET_TOKENS,
  DEFAULT_RETAINED_USER_MESSAGE_TOKENS,
  DEFAULT_RETAINED_USER_MESSAGES,
} from './continuity-tail.ts'
import { planLocalCompaction } from './local-compaction.ts'
import { stripMemoryEnvelope } from './render-envelope.ts'
import { compactBoundaryEvent, resolveSegment } from './segment-boundary.ts'
import { discardArtifacts, withinDeadline } from './timed-compaction.ts'

/**
 * One compaction (VT Code §4), in this order: plan (strip the old envelope, choose the
 * continuity tail and retained user messages) → the one model call, provider-native
 * (`responses.compact`, mode `provider`) or a summary without tools (mode `local`), see
 * compaction-modes.ts; its usage and cost count toward the session → archive the history and
 * write the memory envelope next to it (both create-only) → `pre_compact` hooks, then
 * `session_start` (source `compact`) → write the summary artifact and remove the session's
 * archives past the newest 10 as VT Code does, of those committed compactions wrote (the state
 * lists them, archive-retention.ts) → open the next request segment → replace the transcript,
 * clear the usage anchor and the pending flag, list the new archive → emit
 * `thread.compact_boundary`. Stopped before the platform's timeout (timed-compaction.ts), it
 * ends before the summary, having removed its archive: nothing of it is kept.
 * The caller commits: the batch carries `history.reset`, so a checkpoint follows it and
 * rehydration reads only the new segment.
 */

/** The session's compaction state, created on first use. */
export function compactionState(state: EngineState): EngineCompaction {
  state.compaction ??= { pending: false, compactions: 0 }
  return state.compaction
}

/** One compaction in a `compaction` span: its trigger, and how it ended. */
export function compactTranscript(
  run: CompactionRun,
  request: CompactionRequest,
): Promise<CompactionOutcome> {
  const attributes = {
    'turnline.compaction.trigger': request.trigger,
    'gen_ai.conversation.id': run.ref.sessionId,
  }
  return (run.deps.telemetry ?? noTelemetry).span('compaction', { attributes }, async (span) => {
    const outcome = await withinDeadline(run, (timed) => compactOnce(timed, request))
    span.set({ 'turnline.compaction.outcome': outcome.kind })
    if (outcome.kind === 'failed') span.fail(outcome.error.code, outcome.error.message)
    return outcome
  })
}

/** Long: a compaction's one sequence (plan, produce, archive, replace, record), read in one place so its order is plain. */
async function compactOnce(
  run: CompactionRun,
  request: CompactionRequest,
): Promise<CompactionOutcome> {
  const { deps, ref, state } = run
  const keepFrom = request.keepFrom ?? run.history.length
  const prefix = run.history.slice(0, keepFrom)
  const kept = run.history.slice(keepFrom)
  const counter = await run.meter.counter()
  // Exact counts for the tail and the retained messages, counted in slices before the planning.
  await counter.warm(prefix, request.keepFrom === undefined ? [] : newestUserTexts(prefix))
  const now = deps.clock.now()
  const hard = run.thresholds?.hard
  const retainedBudget = scaled(DEFAULT_RETAINED_USER_MESSAGE_TOKENS, hard, 8)
  const planned = planLocalCompaction(prefix, {
    force: request.force,
    now: new Date(now).toISOString(),
    instructions: request.instructions,
    continuity: {
      countTokens: (message) => counter.countMessage(message),
      // A tail of 20,000 tokens suits contexts of 80,000 and more; smaller ones keep a quarter.
      targetTokens: scaled(CONTINUITY_TAIL_TARGET_TOKENS, hard, 4),
      retainedUserMessageTokens: retainedBudget,
    },
  })
  if (planned.kind === 'skip') return { kind: 'skipped', reason: planned.reason }
  // Recovery keeps the current request verbatim after the prefix: the prefix needs no tail.
  const plan =
    request.keepFrom === undefined
      ? planned
      : {
          ...planned,
          selection: {
            ...planned.selection,
            retainedUsers: retainedUserMessages(
              planned.source,
              DEFAULT_RETAINED_USER_MESSAGES,
              retainedBudget,
              (text) => counter.countText(text),
            ),
            tail: [],
          },
        }

  const produced = await produceCompaction(run, request, plan)
  if (produced.kind === 'failed') return produced
  if (run.cut?.()) return { kind: 'stopped' }
  const { product } = produced

  const compaction = compactionState(state)
  const prior = compaction.memory_envelope_path
    ? await readMemoryEnvelope(deps.sessions.objects, compaction.memory_envelope_path, (error) =>
        run.warnings.push(`the previous memory envelope is unreadable: ${String(error)}`),
      )
    : undefined
  const artifacts = await persistCompactionArtifacts(
    deps.sessions.objects,
    deps.sessions.keys(ref).root,
    { sessionId: ref.sessionId, turn: state.turn_counter, now, source: run.history },
    (historyPath) =>
      buildMemoryEnvelope({
        sessionId: ref.sessionId,
        summary: product.summary,
        generatedAt: new Date(now).toISOString(),
        historyArtifactPath: historyPath,
        prior,
        pendingIntents: [],
        appliedIntentIds: run.appliedIntents,
      }),
  )
  const messages = [...product.complete(artifacts.envelope), ...kept]
  const originalMessageCount = stripMemoryEnvelope(run.history).length
  const mode = product.mode

  const outcome = await runHooks(
    'pre_compact',
    preCompactPayload(hookContext(deps, ref), {
      trigger: request.trigger,
      mode,
      originalMessageCount,
      compactedMessageCount: messages.length,
      historyArtifactPath: artifacts.historyPath,
    }),
    state.config.hooks,
    hookDeps(deps, ref, state, run.signal, run.recordHookAnswer),
  )
  run.warnings.push(...hookWarnings('pre_compact', outcome))
  // VT Code keeps session_start{compact} for compatibility beside pre_compact. Both run before
  // anything of the compaction is kept, so that one stopped by the platform's timeout keeps none.
  const onKept = run.recordHookAnswer
  const { signal } = run
  run.warnings.push(...(await fireSessionStart(deps, ref, state, 'compact', onKept, { signal })))
  if (run.cut?.()) {
    await discardArtifacts(run, artifacts)
    return { kind: 'stopped' }
  }
  const [, archives] = await Promise.all([
    writeCompactionSummary(deps, ref, product.summary, run.warnings),
    retainArchivesQuietly(
      deps.sessions.objects,
      {
        root: deps.sessions.keys(ref).root,
        sessionId: ref.sessionId,
        // A session never compacted has none; a state from before the list was kept, unknown.
        kept: state.compaction_archives ?? (compaction.compactions === 0 ? [] : null),
        added: artifacts.historyPath,
      },
      run.warnings,
    ),
  ])

  const previous = compaction.segment
  const { segment } = await resolveSegment(
    previous,
    run.basis,
    request.trigger === 'recovery' ? 'recovery' : 'compaction',
  )
  run.replaceHistory(messages)
  run.meter.clear()
  compaction.segment = segment
  compaction.pending = false
  delete compaction.usage_anchor
  compaction.compactions += 1
  compaction.memory_envelope_path = artifacts.envelopePath
  state.compaction_archives = archives
  if (compaction.suppressed !== 'sticky' || request.trigger === 'manual') {
    delete compaction.suppressed
    delete compaction.suppressed_turn
  }
  const event = compactBoundaryEvent({
    threadId: run.threadId,
    trigger: request.trigger,
    mode,
    originalMessageCount,
    compactedMessageCount: messages.length,
    historyArtifactPath: artifacts.historyPath,
    previous,
    next: segment,
  })
  run.dispatcher.emit(event)
  return { kind: 'compacted', event }
}

/** The user messages the recovery's retained-user budget may look at, newest first. */
function newestUserTexts(history: readonly HistoryMessage[]): string[] {
  const texts: string[] = []
  for (let i = history.length - 1; i >= 0 && texts.length <= DEFAULT_RETAINED_USER_MESSAGES; i--) {
    const message = history[i]
    if (message?.role === 'user' && message.content.trim() !== '') texts.push(message.content)
  }
  return texts
}

function scaled(fixed: number, hard: number | undefined, divisor: number): number {
  return hard === undefined ? fixed : Math.max(1, Math.min(fixed, Math.floor(hard / divisor)))
}

/**
 * VT Code's suppression after a failed automatic compaction: a size or schema failure holds
 * auto-compaction back for good (a manual compaction lifts it), credit or auth until a model
 * request succeeds again, anything else for the rest of this turn.
 */
export function suppressAfterFailure(state: EngineState, error: TurnlineError): void {
  const compaction = compactionState(state)
  const kind = error.details?.kind
  const code = error.details?.code
  if (kind === 'context_overflow' || kind === 'bad_request') compaction.suppressed = 'sticky'
  else if (kind === 'auth' || code === 'insufficient_quota') compaction.suppressed = 'until_success'
  else {
    compaction.suppressed = 'turn'
    compaction.suppressed_turn = state.turn_counter
  }
}

export function isSuppressed(state: EngineState): boolean {
  const compaction = state.compaction
  if (!compaction?.suppressed) return false
  return compaction.suppressed !== 'turn' || compaction.suppressed_turn === state.turn_counter
}
