import type { LimitsChange } from '../../contract/api.ts'
import type { EngineState, TurnRecord } from '../../contract/engine-state.ts'
import { RECENT_TURN_RECORDS } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { SessionSnapshot } from '../../store/session-snapshot.ts'
import type { EventListener } from '../session-api.ts'
import { EventDispatcher } from './event-dispatcher.ts'
import type { IdempotentCall } from './idempotency.ts'
import type { ServiceDeps } from './service-deps.ts'
import { rememberCommittedState } from './writable-state.ts'

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
  /** The limits changed: the next commit writes the config again. */
  private configChanged = false
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
   * New limits of the session (a turn's `limits`): the config, otherwise written once by the
   * session's first batch, is written again by the next commit (the store merges it over).
   */
  changeLimits(limits: LimitsChange): void {
    const config = this.state.config
    this.state.config = { ...config, limits: { ...config.limits, ...limits } }
    this.configChanged = true
  }

  /** Intent ids whose user messages were appended: recorded by the next commit. */
  markApplied(ids: readonly string[]): void {
    this.appliedIntents.push(...ids)
  }

  /** The manifest write a commit with `overlapManifest` left running (never rejects). */
  get manifestWritten(): Promise<void> | undefined {
    return this.manifestWrite
  }

  /**
   * Commits pending events, transcript delta and state (without `config`, written once). With
   * `overlapManifest` (the last commit of an invocation), the manifest write after the commit
   * point is left running as `manifestWritten`.
   */
  async commit(
    turnId: string,
    maintain: boolean,
    options: { overlapManifest?: boolean } = {},
  ): Promise<void> {
    const { config, ...rest } = this.state
    const patch: Record<string, unknown> = Object.fromEntries(
      Object.entries(rest).map(([k, v]) => [k, v ?? null]),
    )
    if (this.configChanged) patch.config = config
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
        // A private copy: the cached snapshot must not change with this invocation's state.
        state: structuredClone(patch),
        ...(this.appliedIntents.length ? { appliedIntents: this.appliedIntents } : {}),
      },
      { maintain, ...(options.overlapManifest ? { overlapManifest: true } : {}) },
    )
    this.appliedIntents = []
    this.configChanged = false
    this.historyReset = false
    this.committedHistory = this.history.length
    this.current = result.snapshot
    rememberCommittedState(result.snapshot.state)
    if (result.maintenanceError) this.maintenanceFailed(result.maintenanceError)
    this.manifestWrite = result.manifestWritten?.then((error) => {
      if (error !== undefined) this.maintenanceFailed(error)
    })
  }

  private maintenanceFailed(error: unknown): void {
    ;(this.deps.log ?? console.warn)({
      msg: 'session maintenance failed; the next writer repairs it',
      session: this.ref.sessionId,
      error: String(error),
    })
  }
}
