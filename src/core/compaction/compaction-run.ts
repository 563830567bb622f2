import type { EngineState, OpenTurn } from '../../contract/engine-state.ts'
import type { CompactionTrigger } from '../../contract/enums.ts'
import type { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { KeptHookAnswer } from '../../contract/kept-hook-answers.ts'
import type { ThreadCompactBoundaryEvent } from '../../contract/thread-lifecycle-events.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { EventDispatcher } from '../engine/event-dispatcher.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { ResolvedModelSettings } from '../model/model-settings.ts'
import type { InvocationDeadline } from '../turn/invocation-deadline.ts'
import type { ContextMeter } from './context-meter.ts'
import type { SegmentBasis } from './segment-boundary.ts'
import type { CompactionThresholds } from './thresholds.ts'

/** What one compaction works on, what it is asked to do, and how it ends (compact-transcript.ts). */

export interface CompactionRun {
  deps: ServiceDeps
  ref: SessionRef
  threadId: string
  /** Mutated: usage, cost, the compaction state. */
  state: EngineState
  /** The turn whose usage the summary call adds to, if one is running. */
  open?: OpenTurn | undefined
  settings: ResolvedModelSettings
  history: HistoryMessage[]
  replaceHistory: (messages: readonly HistoryMessage[]) => void
  /** Records a hook answer kept whole in the batch that commits the compaction. */
  recordHookAnswer?: ((answer: KeptHookAnswer) => void) | undefined
  dispatcher: EventDispatcher
  basis: SegmentBasis
  meter: ContextMeter
  thresholds: CompactionThresholds | undefined
  /** The session's applied intent window (merged into the envelope). */
  appliedIntents: readonly string[]
  warnings: string[]
  heartbeat?: (() => Promise<void>) | undefined
  signal?: AbortSignal | undefined
  /**
   * The platform's bound on the invocation (Lambda's timeout): the compaction's model request
   * and hooks stop before it, and the compaction is then `stopped` (timed-compaction.ts).
   */
  deadline?: InvocationDeadline | undefined
  /** Whether that bound stopped the compaction: checked before anything of it is kept. */
  cut?: (() => boolean) | undefined
}

export interface CompactionRequest {
  trigger: CompactionTrigger
  /** Summarize even a history of 10 messages or fewer (manual, model switch, recovery). */
  force: boolean
  /** Replaces the summary instruction (manual compaction). */
  instructions?: string | undefined
  /** Recovery: messages from here on (the current request and its tool results) stay as they are. */
  keepFrom?: number | undefined
}

export type CompactionOutcome =
  | { kind: 'compacted'; event: ThreadCompactBoundaryEvent }
  | { kind: 'skipped'; reason: 'too_short' }
  | { kind: 'failed'; error: TurnlineError }
  /** Stopped before the platform's timeout: nothing of it was kept. */
  | { kind: 'stopped' }
