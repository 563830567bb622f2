import * as z from 'zod'
import { TurnRequestSchema } from './api.ts'
import { lazySchema } from './lazy-schema.ts'
import { CounterSchema, documentCodec, Rfc3339Schema } from './stored-document.ts'

/**
 * `.turnline/work/pending/<tenant>/<session_id>/<work_id>.json` at the root of the session
 * store: one background turn accepted (answered 202) and not yet run to an outcome. Written
 * create-only before the 202 — the conditional write is what makes a retried request (same
 * Idempotency-Key, so the same `work_id`) or a redelivered webhook a duplicate — and deleted by
 * the worker once the turn has an outcome. A worker that finds it refused (a fault that will not
 * pass by retrying) rewrites it with `failed` (If-Match) and leaves it for the status resource;
 * a retryable fault only counts an attempt; a refusal for the tenant's daily quota counts
 * nothing and records `waiting` (the record stays until the quota allows it or it expires).
 *
 * One record per request, not per session: a session may have several queued, each named by its
 * idempotency key, so deleting one (the store has no conditional delete) never touches another.
 */
export const WORK_RECORD_FORMAT = 'turnline.work'
export const WORK_RECORD_VERSION = 1

/** 32 lowercase hex characters: the first half of the SHA-256 of the idempotency key. */
export const WorkIdSchema = lazySchema(() => z.string().regex(/^[0-9a-f]{32}$/))

/** What asked for the work: a turn request, an exec run, a webhook delivery, a loop step. */
export const WorkSourceSchema = lazySchema(() =>
  z.enum(['turns', 'exec', 'webhook', 'loops', 'responses']),
)
export type WorkSource = z.infer<typeof WorkSourceSchema>

export const WorkErrorSchema = lazySchema(() =>
  z.object({
    code: z.string().min(1),
    message: z.string(),
    at: Rfc3339Schema,
  }),
)
export type WorkError = z.infer<typeof WorkErrorSchema>

/**
 * Work refused admission because its tenant's daily quota is used up: it waits for the quota
 * (never counted as a fault) and is tried again no sooner than `retry_at`
 * (core/background/quota-wait.ts), until the work's maximum age.
 */
export const WorkWaitSchema = lazySchema(() =>
  z.object({
    code: z.literal('quota_exceeded'),
    /** The last refusal's message (which quota, how much of it is used). */
    message: z.string(),
    /** The first refusal of this wait. */
    since: Rfc3339Schema,
    retry_at: Rfc3339Schema,
    /** Refusals so far (each one a try that found the quota used up). */
    refusals: CounterSchema,
  }),
)
export type WorkWait = z.infer<typeof WorkWaitSchema>

export const WorkRecordSchema = lazySchema(() =>
  z.object({
    format: z.literal(WORK_RECORD_FORMAT),
    version: z.literal(WORK_RECORD_VERSION),
    work_id: WorkIdSchema,
    /**
     * `turn`: one turn of the session `session_id`. `loop_step`: step `step_index` of loop
     * `loop_id` (its folder is `loop.<loop_id>` where a turn's is its session id: no session id
     * starts so), with `request.input` added to the task for that step.
     */
    kind: z.enum(['turn', 'loop_step']),
    source: WorkSourceSchema,
    tenant: z.string().min(1),
    session_id: z.string().min(1),
    loop_id: z.string().min(1).optional(),
    step_index: CounterSchema.optional(),
    /** A loop run's step: once it ran, the worker records the run's next step (or stops the run). */
    run_id: z.string().min(1).max(80).optional(),
    /** The turn's idempotency key: the caller's `Idempotency-Key`, or one the server made. */
    idempotency_key: z.string().min(1).max(256),
    /** Hex SHA-256 of the request: the same key with another request is refused (422). */
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    request: TurnRequestSchema,
    created_at: Rfc3339Schema,
    /** When a worker's run of it started its turn (the first event under the session's lease). */
    started_at: Rfc3339Schema.optional(),
    /** Runs that ended in a retryable fault (the record stays for the next wake or sweep). */
    attempts: CounterSchema,
    last_error: WorkErrorSchema.optional(),
    /** Set once the work was refused for its tenant's daily quota: it waits for the quota. */
    waiting: WorkWaitSchema.optional(),
    /** Set when the work cannot run (a refusal, or too many faults): kept, never run again. */
    failed: WorkErrorSchema.optional(),
  }),
)
export type WorkRecord = z.infer<typeof WorkRecordSchema>

const codec = documentCodec(WorkRecordSchema, {
  format: WORK_RECORD_FORMAT,
  version: WORK_RECORD_VERSION,
  what: 'work record',
})

/** Reads a work record. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export const parseWorkRecord: (input: Uint8Array | string) => WorkRecord = codec.parse

/** Compact JSON of a work record, keys in schema order. */
export const serializeWorkRecord: (record: WorkRecord) => string = codec.serialize

/** The folder of a loop's background steps, in place of a session id. */
export function loopWorkFolder(loopId: string): string {
  return `loop.${loopId}`
}

/** Where a pending record is: enough for a worker to find and run it. */
export interface WorkLocation {
  tenant: string
  session_id: string
  work_id: string
}
