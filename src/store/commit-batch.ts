import type { Batch } from '../contract/batch.ts'
import { BATCH_FORMAT, BATCH_VERSION, serializeBatch } from '../contract/batch.ts'
import { type BatchEncoding, type Gzip, storedBatchBody } from '../contract/batch-encoding.ts'
import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import type { HistoryMessage } from '../contract/history-message.ts'
import { type KeptHookAnswer, storedHookAnswers } from '../contract/kept-hook-answers.ts'
import { EVENT_SCHEMA_VERSION, serializeVersionedLine } from '../contract/serialize.ts'
import type { ThreadEvent } from '../contract/thread-event.ts'
import type { TurnInputRecord } from '../contract/turn-input-record.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { utf8Length } from '../shared/utf8-length.ts'
import { BUFFER_MAX_BYTES, BUFFER_MAX_EVENTS } from './event-buffer.ts'
import { SessionImages } from './session-images.ts'
import type { SessionKeys } from './session-ref.ts'
import type { SessionSnapshot } from './session-snapshot.ts'
import { foldBatch } from './session-snapshot.ts'

export type { Gzip }

/** Largest single event line accepted (a bounded tool preview fits many times over). */
export const MAX_EVENT_LINE_BYTES = 1024 * 1024

/** A committed batch: the snapshot after it, its size and its canonical lines. */
export interface CommittedBatch {
  batch: Batch
  snapshot: SessionSnapshot
  bytes: number
  lines: string[]
}

/** What a writer commits in one batch. */
export interface CommitInput {
  events: ThreadEvent[]
  /**
   * The events' canonical lines exactly as `serializeVersionedLine` wrote them (e.g. when they
   * were dispatched), one per event: written as they are instead of serializing every event
   * again. Omitted: serialized here.
   */
  lines?: string[]
  turnId?: string
  idempotencyKey?: string
  history?: { reset?: boolean; append: HistoryMessage[] }
  state?: Record<string, unknown>
  /**
   * `state` holds only the fields whose JSON differs from the snapshot's state's, or that it lacks
   * (the writer compared them: `statePatch`): written as it is instead of being compared again.
   */
  stateChangesOnly?: boolean
  appliedIntents?: string[]
  /** What the turn this batch starts was asked (with its `turn.started`). */
  turnInput?: TurnInputRecord
  /** Hook answers kept whole as artifacts by the hooks whose effect this batch commits. */
  hookAnswers?: readonly KeptHookAnswer[]
}

/**
 * Builds the next batch of `snapshot` and writes it create-only: the one commit point.
 * Losing the race (someone committed that batch number first) throws TurnlineError('conflict')
 * and writes nothing else. Returns the batch and the snapshot after it; `onNamed` gets them as
 * soon as the batch can be read under its name, when the store still has to make it durable
 * (`PutOptions.onNamed`).
 */
export async function commitBatch(
  store: ObjectStore,
  keys: SessionKeys,
  snapshot: SessionSnapshot,
  input: CommitInput,
  committedAt: string,
  onNamed?: (committed: CommittedBatch) => void,
  encoding?: BatchEncoding,
): Promise<CommittedBatch> {
  if (snapshot.status === 'completed') {
    throw new TurnlineError(
      'session_completed',
      `session ${snapshot.ref.sessionId} has completed (thread.completed was recorded); ` +
        'it accepts no further events',
    )
  }
  const lines = input.lines ?? input.events.map((event) => serializeVersionedLine(event))
  if (lines.length !== input.events.length) {
    throw new TurnlineError('internal', 'a batch needs exactly one serialized line per event')
  }
  validateEvents(input.events, lines)
  // `data:` images are stored once in the session's folder; the batch names them.
  const images = new SessionImages(store, keys.root)
  const history = input.history && {
    ...input.history,
    append: await images.stashMessages(input.history.append),
  }
  const turnInput = input.turnInput && (await images.stashInput(input.turnInput))
  const state =
    input.state &&
    (input.stateChangesOnly
      ? someChanged(snapshot.state, input.state)
      : changedFields(snapshot.state, input.state))
  const hookAnswers = storedHookAnswers(input.hookAnswers ?? [])
  const batch: Batch = {
    format: BATCH_FORMAT,
    version: BATCH_VERSION,
    batch: snapshot.lastBatch + 1,
    first_seq: snapshot.nextSeq,
    events: input.events.map((event) => ({ schema_version: EVENT_SCHEMA_VERSION, event })),
    committed_at: committedAt,
    commit_id: commitId(),
    ...(input.turnId ? { turn_id: input.turnId } : {}),
    ...(input.idempotencyKey ? { idempotency_key: input.idempotencyKey } : {}),
    ...(history ? { history } : {}),
    ...(state ? { state } : {}),
    ...(input.appliedIntents?.length ? { applied_intents: input.appliedIntents } : {}),
    ...(turnInput ? { turn_input: turnInput } : {}),
    ...(hookAnswers ? { hook_answers: hookAnswers } : {}),
  }
  const { body, contentType } = await storedBatchBody(batch, serializeBatch(batch, lines), encoding)
  const committed = { batch, snapshot: foldBatch(snapshot, batch), bytes: body.byteLength, lines }
  const named = onNamed && (() => onNamed(committed))
  try {
    await store.put(keys.batch(batch.batch), body, {
      ifNoneMatch: '*',
      contentType,
      ...(named ? { onNamed: named } : {}),
    })
  } catch (error) {
    // A transport retry of our own create-only PUT whose first reply was lost comes back as a
    // conflict although we won: the stored bytes are then exactly ours.
    if (
      !isTurnlineError(error, 'conflict') ||
      !(await holds(store, keys.batch(batch.batch), body))
    ) {
      throw error
    }
  }
  return committed
}

/**
 * The fields of `after` whose value differs from `before`'s (compared as JSON), or undefined when
 * none does: what a batch writes of the engine state (version 6). Folded over `before` it gives
 * what folding `after` whole gives, field for field — a field `after` lacks stays as it was in both.
 */
function changedFields(
  before: Record<string, unknown> | undefined,
  after: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (!before) return after
  let changed: Record<string, unknown> | undefined
  for (const [key, value] of Object.entries(after)) {
    if (value === undefined) continue
    if (key in before && JSON.stringify(before[key]) === JSON.stringify(value)) continue
    changed ??= {}
    changed[key] = value
  }
  return changed
}

/** `changes` as changedFields would give it when they are what changed: undefined when empty. */
function someChanged(
  before: Record<string, unknown> | undefined,
  changes: Record<string, unknown>,
): Record<string, unknown> | undefined {
  if (!before) return changes
  let some = false
  for (const key in changes) {
    if (changes[key] === undefined) return changedFields(before, changes)
    some = true
  }
  return some ? changes : undefined
}

/** 32 hex characters (a v4 UUID's 122 random bits): randomUUID draws from a pooled source. */
function commitId(): string {
  return crypto.randomUUID().replaceAll('-', '')
}

async function holds(store: ObjectStore, key: string, body: Uint8Array): Promise<boolean> {
  const stored = await store.get(key)
  if (!stored || stored.body.byteLength !== body.byteLength) return false
  return stored.body.every((byte, i) => byte === body[i])
}

function validateEvents(events: ThreadEvent[], lines: readonly string[]): void {
  if (events.length === 0) {
    throw new TurnlineError('invalid_input', 'a batch needs at least one event')
  }
  if (events.length > BUFFER_MAX_EVENTS) {
    throw new TurnlineError(
      'buffer_overflow',
      `a batch holds at most ${BUFFER_MAX_EVENTS} events (got ${events.length})`,
    )
  }
  let total = 0
  events.forEach((event, index) => {
    const size = utf8Length(lines[index] ?? '')
    if (size > MAX_EVENT_LINE_BYTES) {
      throw new TurnlineError(
        'payload_too_large',
        `event ${index} (${event.type}) serializes to ${size} bytes; the limit is ` +
          `${MAX_EVENT_LINE_BYTES} bytes per event`,
      )
    }
    total += size
    if (event.type === 'thread.completed' && index !== events.length - 1) {
      throw new TurnlineError('invalid_input', 'thread.completed must be the last event')
    }
  })
  if (total > BUFFER_MAX_BYTES) {
    throw new TurnlineError(
      'buffer_overflow',
      `a batch holds at most ${BUFFER_MAX_BYTES} bytes of events (got ${total})`,
    )
  }
}
