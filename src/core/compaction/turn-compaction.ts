import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import type { TurnlineError } from '../../contract/errors.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { TurnWriter } from '../engine/turn-writer.ts'
import type { ResolvedModelSettings } from '../model/model-settings.ts'
import { orientIfPending } from '../orientation/orient-step.ts'
import { systemPrompt } from '../orientation/system-prompt.ts'
import { COMPACTION_STOPPED, type InvocationDeadline } from '../turn/invocation-deadline.ts'
import type { TurnMachine } from '../turn/turn-machine.ts'
import {
  compactionState,
  compactTranscript,
  isSuppressed,
  suppressAfterFailure,
} from './compact-transcript.ts'
import { meterFor, segmentBasis, thresholdsFor } from './compaction-basis.ts'
import type { CompactionOutcome, CompactionRequest, CompactionRun } from './compaction-run.ts'
import type { ContextMeter } from './context-meter.ts'
import {
  applyOrientationReset,
  recordTurnForReset,
  resetAfterCompaction,
} from './context-reset-step.ts'
import { tooShortToCompact } from './continuity-tail.ts'
import { openSegment, resolveSegment } from './segment-boundary.ts'
import type { CompactionThresholds } from './thresholds.ts'
import { decideCompaction } from './thresholds.ts'

/**
 * Compaction inside a turn. `orientResetAndOpenSegment` (once per invocation, before the first
 * request): a pending orient phase runs, a pending context reset replaces the
 * transcript with orientation, then the request segment is resolved — a model or provider
 * change compacts (trigger `model_switch`) when the history is long enough, any other change
 * only opens the next segment; a switch's compaction stopped before the platform's timeout
 * (`switch_pending`) is run again, as a switch's, by the turn's continuation. `beforeRequest`:
 * the threshold decision (soft → pending, hard or pending at a turn boundary → compact now;
 * inside a tool loop only the flag). `observe`: the provider's count becomes the anchor.
 * `recover`: a rejected follow-up compacts the older prefix once (trigger `recovery`) and is
 * retried; a second failure blocks the turn.
 */

export interface TurnCompactionInput {
  deps: ServiceDeps
  ref: SessionRef
  threadId: string
  state: EngineState
  open: OpenTurn
  /** The turn's state machine (`state` and `open` are its objects): a commit leaves it open. */
  turn: TurnMachine
  writer: TurnWriter
  settings: ResolvedModelSettings | undefined
  tools: readonly ToolDefinition[]
  warnings: string[]
  /** Transcript length before this turn's own messages; undefined when continuing a turn. */
  turnStart?: number | undefined
  heartbeat?: () => Promise<void>
  signal?: AbortSignal | undefined
  /** The platform's bound on the invocation: a compaction still running near it is stopped. */
  deadline?: InvocationDeadline | undefined
}

/** `paused`: a compaction was stopped before the platform's timeout; the turn stays open. */
export type RecoveryVerdict = 'retry' | 'blocked' | 'none' | 'paused'

export class TurnCompaction {
  private readonly meter: ContextMeter | undefined
  private readonly thresholds: CompactionThresholds | undefined
  private recovered = false

  constructor(private readonly input: TurnCompactionInput) {
    const { settings, state } = input
    this.meter = settings ? meterFor(input.deps, state, settings) : undefined
    this.thresholds = settings ? thresholdsFor(state, settings) : undefined
  }

  /** `paused` when the model switch's compaction was stopped before the platform's timeout. */
  async orientResetAndOpenSegment(): Promise<'paused' | undefined> {
    const { state, settings, turnStart, writer } = this.input
    const compaction = compactionState(state)
    if (turnStart !== undefined) delete compaction.blocked
    if (!settings || !this.meter) return
    if (turnStart !== undefined && !compaction.reset_manifest) {
      const { deps, ref, warnings } = this.input
      await orientIfPending({ deps, ref, state, warnings })
    }
    const basis = segmentBasis(state, settings, this.input.tools)
    if (compaction.reset_manifest && turnStart !== undefined) {
      await applyOrientationReset(this.input, turnStart, async () => {
        compaction.segment = await openSegment((compaction.segment?.sequence ?? 0) + 1, basis)
        this.clearAnchor()
        await this.commit()
      })
      return
    }
    const current = compaction.segment
    const resolved = await resolveSegment(current, basis)
    // A switch's compaction stopped before the platform's timeout: its continuation runs it.
    const retried = compaction.switch_pending === true
    delete compaction.switch_pending
    if (!resolved.opened) return
    const switched = resolved.reasons.includes('model') || resolved.reasons.includes('provider')
    const harness = state.config.harness
    // A provider compaction item is readable only by its provider: a switch away must compact.
    const opaque = writer.history.some((message) => message.role === 'compaction')
    if (
      current &&
      switched &&
      (turnStart !== undefined || retried) &&
      (opaque ||
        (harness.compact_on_model_switch &&
          harness.auto_compaction_enabled &&
          !tooShortToCompact(writer.history, { force: false })))
    ) {
      const outcome = await this.compact({ trigger: 'model_switch', force: true })
      if (outcome.kind === 'compacted') return
      // Kept as a switch's (the segment is not moved on): the continuation compacts as one.
      if (outcome.kind === 'stopped') return this.paused('switch_pending')
      if (outcome.kind === 'failed') {
        this.input.warnings.push(`compaction for the model switch failed: ${outcome.error.message}`)
      }
    }
    compaction.segment = resolved.segment
    this.clearAnchor()
    return undefined
  }

  /** `paused` when the compaction was stopped before the platform's timeout: the turn pauses. */
  async beforeRequest(): Promise<'paused' | undefined> {
    const { state, open, writer, settings } = this.input
    const thresholds = this.thresholds
    const compaction = compactionState(state)
    const inToolLoop = open.tool_loops > 0
    if (!settings || !this.meter || !thresholds) return
    if (!state.config.harness.auto_compaction_enabled || isSuppressed(state)) return
    if (inToolLoop && compaction.pending) return
    const tokens =
      compaction.pending && !inToolLoop
        ? 0
        : (
            await this.meter.measure(
              writer.history,
              { systemPrompt: systemPrompt(state), tools: this.input.tools },
              thresholds.soft,
              thresholds.hard,
            )
          ).tokens
    const decision = decideCompaction({
      tokens,
      thresholds,
      enabled: true,
      pending: compaction.pending,
      inToolLoop,
    })
    if (decision.action === 'pending') compaction.pending = true
    if (decision.action !== 'now') return undefined
    const outcome = await this.compact({ trigger: 'auto', force: false })
    if (outcome.kind === 'stopped') return this.paused('pending')
    if (outcome.kind === 'skipped') compaction.pending = false
    if (outcome.kind === 'failed') {
      suppressAfterFailure(state, outcome.error)
      this.input.warnings.push(`automatic compaction failed: ${outcome.error.message}`)
    }
    if (outcome.kind === 'compacted') await resetAfterCompaction(this.input)
    return undefined
  }

  /**
   * A compaction stopped before the platform's timeout kept nothing: pending again as what it
   * was (`pending`: automatic; `switch_pending`: a model switch's, forced), it pauses.
   */
  private paused(flag: 'pending' | 'switch_pending'): 'paused' {
    compactionState(this.input.state)[flag] = true
    this.input.warnings.push(COMPACTION_STOPPED)
    return 'paused'
  }

  /** The provider counted `inputTokens` for the request that carried `messageCount` messages. */
  observe(inputTokens: number, messageCount: number): void {
    const compaction = compactionState(this.input.state)
    if (compaction.suppressed === 'until_success') delete compaction.suppressed
    if (!this.meter) return
    this.meter.observe(inputTokens, messageCount)
    const anchor = this.meter.anchor
    if (anchor) compaction.usage_anchor = anchor
  }

  /** After a rejected model request: compact the older prefix once and retry, or block. */
  async recover(error: TurnlineError): Promise<RecoveryVerdict> {
    const { open, writer } = this.input
    const kind = error.details?.kind
    const afterToolOutput = open.tool_loops > 0 && writer.history.at(-1)?.role === 'tool'
    const transient = kind === 'server' || kind === 'network'
    if (kind !== 'context_overflow' && !(transient && afterToolOutput)) return 'none'
    if (this.recovered) return 'blocked'
    this.recovered = true
    const keepFrom = writer.history.findLastIndex((message) => message.role === 'user')
    if (keepFrom <= 0) return 'blocked'
    const outcome = await this.compact({ trigger: 'recovery', force: true, keepFrom })
    // The request is sent again by the continuation, which may recover once more.
    if (outcome.kind === 'stopped') {
      this.input.warnings.push(COMPACTION_STOPPED)
      return 'paused'
    }
    if (outcome.kind === 'failed') {
      this.input.warnings.push(`recovery compaction failed: ${outcome.error.message}`)
    }
    return outcome.kind === 'compacted' ? 'retry' : 'blocked'
  }

  /** Ends the turn blocked and resumable: the transcript keeps the completed tool output. */
  blocked(error: TurnlineError): { kind: 'failed'; message: string } {
    compactionState(this.input.state).blocked = true
    return {
      kind: 'failed',
      message:
        `blocked: the model request failed after recovery compaction (${error.message}); ` +
        'completed tool output is kept — POST /turns without input to retry, or with input to redirect',
    }
  }

  /** Stall accounting for `context_reset_mode: on_stall`, before the turn's last commit. */
  async finish(end: 'completed' | 'failed' | 'other'): Promise<void> {
    await recordTurnForReset(this.input, end)
  }

  private clearAnchor(): void {
    this.meter?.clear()
    delete compactionState(this.input.state).usage_anchor
  }

  private async compact(request: CompactionRequest): Promise<CompactionOutcome> {
    const { deps, ref, threadId, state, open, writer, settings } = this.input
    if (!settings || !this.meter) throw new Error('unreachable: compaction without a model')
    const run: CompactionRun = {
      deps,
      ref,
      threadId,
      state,
      open,
      settings,
      history: writer.history,
      replaceHistory: (messages) => writer.replaceHistory(messages),
      recordHookAnswer: (answer) => writer.recordHookAnswer(answer),
      dispatcher: writer.dispatcher,
      basis: segmentBasis(state, settings, this.input.tools),
      meter: this.meter,
      thresholds: this.thresholds,
      appliedIntents: writer.snapshot.appliedIntents,
      warnings: this.input.warnings,
      heartbeat: this.input.heartbeat,
      signal: this.input.signal,
      deadline: this.input.deadline,
    }
    const outcome = await compactTranscript(run, request)
    if (outcome.kind === 'compacted') await this.commit()
    return outcome
  }

  /** Commits the replaced transcript now: a reset batch, followed by a checkpoint. */
  private async commit(): Promise<void> {
    const { turn, writer } = this.input
    turn.apply({ type: 'turn_left_open' })
    await writer.commit(turn.open.turn_id, 'history_reset')
  }
}
