import type { EngineState, TurnRecord } from '../../contract/engine-state.ts'
import { RECENT_TURN_RECORDS } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { KeptHookAnswer } from '../../contract/kept-hook-answers.ts'
import type { TurnInputRecord } from '../../contract/turn-input-record.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'
import type { EventListener } from '../session-api.ts'
import { EventDispatcher } from './event-dispatcher.ts'
import type { IdempotentCall } from './idempotency.ts'
import type { ServiceDeps } from './service-deps.ts'
import { serviceLog } from './service-log.ts'
import { rememberCommittedState, statePatch } from './writable-state.ts'

/**
 * The named points at which an invocation commits a batch (the session log's only commit
 * point, `SessionStore.commit`), in the order a turn may reach them:
 *
 * - `before_tools`: the open turn with its invocations, before the first side-effecting tool
 *   runs (a crash after it reports them interrupted, never runs them again); no maintenance,
 *   and its lines are appended to events.jsonl while the tools run (`deferAppend`).
 * - `history_reset`: a compaction or context reset replaced the transcript; the store follows
 *   it with a checkpoint, so rehydration reads the new segment only.
 * - `turn_end`: how every invocation ends (`respond`): its last events and state; the manifest
 *   write after it is left running (`manifestWritten`) to overlap with the coordinator's end.
 */
export type CommitPoint = 'before_tools' | 'history_reset' | 'turn_end'

/**
 * What one invocation writes: the dispatcher of its events, the transcript it extends and the
 * engine state it changes, committed as batches after the snapshot it started from.
 */
export class TurnWriter {
  readonly dispatcher: EventDispatcher
  readonly history: HistoryMessage[]
  readonly firstBatch: number
  private committedHistory: number
  private appliedIntents: string[] = []
  /** The transcript was replaced: the next commit starts a new segment (`history.reset`). */
  private historyReset = false
  /** The config changed: the next commit writes it again. */
  private rewriteConfig = false
  /** What the turn this invocation started was asked: recorded by the next commit. */
  private turnInput: TurnInputRecord | undefined
  /** Hook answers kept whole as artifacts since the last commit: recorded by the next. */
  private hookAnswers: KeptHookAnswer[] = []
  private current: SessionSnapshot
  private manifestWrite: Promise<void> | undefined

  constructor(
    private readonly deps: ServiceDeps,
    private readonly ref: SessionRef,
    start: SessionSnapshot,
    readonly state: EngineState,
    private readonly call: IdempotentCall | undefined,
    listener?: EventListener,
  ) {
    this.current = start
    this.dispatcher = new EventDispatcher(start.nextSeq, listener)
    this.history = [...start.history]
    this.committedHistory = this.history.length
    this.firstBatch = start.lastBatch + 1
  }

  get snapshot(): SessionSnapshot {
    return this.current
  }

  /** Whether this invocation committed a batch already. */
  get committed(): boolean {
    return this.current.lastBatch >= this.firstBatch
  }

  /** The record a retried Idempotency-Key is answered from, kept in state (newest 16). */
  remember(record: Omit<TurnRecord, 'key' | 'first_batch' | 'last_batch'>): TurnRecord {
    const full: TurnRecord = {
      key: this.call?.key ?? '',
      ...(this.call ? { request_fingerprint: this.call.fingerprint } : {}),
      first_batch: this.firstBatch,
      last_batch: this.current.lastBatch + 1,
      ...record,
    }
    const key = this.call?.key
    if (key) {
      this.state.recent_turns = [
        ...this.state.recent_turns.filter((r) => r.key !== key),
        full,
      ].slice(-RECENT_TURN_RECORDS)
    }
    return full
  }

  /** Replaces the transcript in place (compaction, context reset); committed as a reset. */
  replaceHistory(messages: readonly HistoryMessage[]): void {
    const next = [...messages]
    this.history.length = 0
    for (const message of next) this.history.push(message)
    this.committedHistory = 0
    this.historyReset = true
  }

  /**
   * The session's config changed (a turn's new limits, `limits_changed`): the config, otherwise
   * written once by the session's first batch, is written again by the next commit (the store
   * merges it over).
   */
  configChanged(): void {
    this.rewriteConfig = true
  }

  /** Records what the turn this invocation starts was asked (with its `turn.started`). */
  recordTurnInput(input: TurnInputRecord): void {
    this.turnInput = input
  }

  /** A hook answer kept whole as an artifact: recorded by the next commit, with its effect. */
  recordHookAnswer(answer: KeptHookAnswer): void {
    this.hookAnswers.push(answer)
  }

  /** Intent ids whose user messages were appended: recorded by the next commit. */
  markApplied(ids: readonly string[]): void {
    this.appliedIntents.push(...ids)
  }

  /** The manifest write the `turn_end` commit left running (never rejects). */
  get manifestWritten(): Promise<void> | undefined {
    return this.manifestWrite
  }

  /**
   * Commits pending events, transcript delta and state (`config` only when the limits changed)
   * at one of the named commit points (`CommitPoint`).
   */
  async commit(turnId: string, point: CommitPoint): Promise<void> {
    // Maintenance (checkpoint, rollup, manifest) follows every commit but the one before tools.
    const maintain = point !== 'before_tools'
    const { config, ...rest } = this.state
    const patch: Record<string, unknown> = Object.fromEntries(
      Object.entries(rest).map(([k, v]) => [k, v ?? null]),
    )
    if (this.rewriteConfig) patch.config = config
    // Private copies of the changed fields: the cached snapshot must not change with this
    // invocation's state.
    const changed = statePatch(this.current.state, patch)
    const { events, lines } = this.dispatcher.takeWithLines()
    const result = await this.deps.sessions.commit(
      this.current,
      {
        events,
        lines,
        turnId,
        ...(this.call ? { idempotencyKey: this.call.key } : {}),
        history: {
          ...(this.historyReset ? { reset: true } : {}),
          append: this.history.slice(this.committedHistory),
        },
        state: changed.patch,
        stateChangesOnly: true,
        ...(this.appliedIntents.length ? { appliedIntents: this.appliedIntents } : {}),
        ...(this.turnInput ? { turnInput: this.turnInput } : {}),
        ...(this.hookAnswers.length ? { hookAnswers: this.hookAnswers } : {}),
      },
      {
        maintain,
        ...(point === 'turn_end' ? { overlapManifest: true } : {}),
        ...(point === 'before_tools' ? { deferAppend: true } : {}),
      },
    )
    this.appliedIntents = []
    this.turnInput = undefined
    this.hookAnswers = []
    this.rewriteConfig = false
    this.historyReset = false
    this.committedHistory = this.history.length
    this.current = result.snapshot
    rememberCommittedState(result.snapshot.state, changed.fields)
    if (result.maintenanceError) this.maintenanceFailed(result.maintenanceError)
    this.manifestWrite = result.manifestWritten?.then((error) => {
      if (error !== undefined) this.maintenanceFailed(error)
    })
  }

  private maintenanceFailed(error: unknown): void {
    serviceLog(this.deps)({
      msg: 'session maintenance failed; the next writer repairs it',
      session: this.ref.sessionId,
      error: String(error),
    })
  }
}
