import { writeSync } from 'node:fs'
import type { TurnlineClient } from '../client/turnline-client.ts'
import type { SeqEvent, TurnStatus } from '../client/types.ts'
import { serializeEvent } from '../src/contract/serialize.ts'
import type { ThreadCompletedEvent } from '../src/contract/thread-lifecycle-events.ts'
import type { Progress } from './progress.ts'

export interface RunOutputOptions {
  client: TurnlineClient
  /** Bare ThreadEvent lines on stdout (`--json`). */
  json: boolean
  /** File descriptor of `--events FILE`: the same lines. */
  eventsFd?: number
  progress?: Progress
  writeStdout: (text: string) => void
}

/**
 * Where a session's events go, in seq order, each exactly once: the JSON lines (stdout, the
 * events file), the human progress view, and what the end of the run needs (the last answer,
 * `thread.completed`). Live events can skip seqs that another invocation committed (a runner
 * callback continuing the turn, a retry after `session_busy`): the gap is read from the events
 * feed before the event is shown.
 */
export class RunOutput {
  private sessionId = ''
  private lastSeq = -1
  /** The last non-empty assistant answer (else the last plan), as `--last-message-file` wants. */
  finalMessage: string | undefined
  private lastPlan: string | undefined
  completed: ThreadCompletedEvent | undefined
  /** How the last turn ended, as read from its events. */
  lastTurnEnd: TurnStatus | undefined

  constructor(private readonly options: RunOutputOptions) {}

  /** Follows `sessionId` from after `lastSeq` (a new session: -1). */
  follow(sessionId: string, lastSeq: number): void {
    this.sessionId = sessionId
    this.lastSeq = lastSeq
    this.completed = undefined
  }

  /**
   * A resumed run shows only what happens from here; the progress view first reads what came
   * before (quietly), so that the output of an earlier tool call names its tool.
   */
  async recall(): Promise<void> {
    const progress = this.options.progress
    if (!progress || this.lastSeq < 0) return
    await recallEvents(this.options.client, this.sessionId, this.lastSeq, (e) => progress.learn(e))
  }

  get seq(): number {
    return this.lastSeq
  }

  async accept(item: SeqEvent): Promise<void> {
    if (item.seq <= this.lastSeq) return
    if (item.seq > this.lastSeq + 1) await this.catchUp(item.seq - 1)
    this.emit(item)
  }

  /** Reads and shows every committed event after the last one shown (up to `upTo`). */
  async catchUp(upTo = Number.POSITIVE_INFINITY): Promise<void> {
    while (this.lastSeq < upTo) {
      const page = await this.options.client.readEvents(this.sessionId, {
        after: this.lastSeq,
        limit: 1000,
      })
      const fresh = page.events.filter((e) => e.seq > this.lastSeq && e.seq <= upTo)
      if (fresh.length === 0) return
      for (const event of fresh) this.emit(event)
    }
  }

  private emit({ seq, event }: SeqEvent): void {
    this.lastSeq = seq
    if (this.options.json || this.options.eventsFd !== undefined) {
      const line = `${serializeEvent(event)}\n`
      if (this.options.json) this.options.writeStdout(line)
      if (this.options.eventsFd !== undefined) writeSync(this.options.eventsFd, line)
    }
    this.options.progress?.event(event)
    switch (event.type) {
      case 'item.completed':
        if (event.item.type === 'agent_message' && event.item.text.trim() !== '') {
          this.finalMessage = event.item.text
        } else if (event.item.type === 'plan' && event.item.text.trim() !== '') {
          this.lastPlan = event.item.text
        }
        return
      case 'turn.started':
        this.finalMessage = undefined
        return
      case 'turn.completed':
        this.lastTurnEnd = 'completed'
        return
      case 'turn.failed':
        this.lastTurnEnd = 'failed'
        return
      case 'permission.requested':
      case 'plan.approval.requested':
        this.lastTurnEnd = 'awaiting_approval'
        return
      case 'thread.completed':
        this.completed = event
        this.lastTurnEnd = 'terminal'
        return
      default:
        return
    }
  }

  /** The message `--last-message-file` and stdout get: the last answer, else the last plan. */
  get lastMessage(): string | undefined {
    return this.finalMessage ?? this.lastPlan
  }
}

/** Feeds the events of a session up to `upTo` (inclusive) to `learn`, page by page. */
export async function recallEvents(
  client: TurnlineClient,
  sessionId: string,
  upTo: number,
  learn: (event: SeqEvent['event']) => void,
): Promise<void> {
  let after = -1
  while (after < upTo) {
    const page = await client.readEvents(sessionId, { after, limit: 1000 })
    const fresh = page.events.filter((e) => e.seq > after && e.seq <= upTo)
    if (fresh.length === 0) return
    for (const { event } of fresh) learn(event)
    after = fresh.at(-1)?.seq ?? upTo
  }
}
