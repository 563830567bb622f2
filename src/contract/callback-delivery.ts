import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { documentCodec, Rfc3339Schema } from './stored-document.ts'
import { UsageSchema } from './usage.ts'

/**
 * Completion callbacks (docs/http-api.md#completion-callbacks): a session (also each step
 * session of a loop, each run of a webhook hook: their `session` settings) may name a URL that
 * Turnline POSTs a Standard Webhooks-signed notice to when a turn waits for a person, completes
 * or fails, when the thread completes, and when background work fails without a turn to report
 * it (`work.failed`). Notices go out from a durable outbox in the object
 * store: a marker per committed batch (`turnline.callback_batch`) and a delivery record per
 * notice (`turnline.callback_delivery`), both versioned.
 */

/** A background work's id (as contract/work-record.ts, which imports the session settings). */
const WorkIdSchema = lazySchema(() => z.string().regex(/^[0-9a-f]{32}$/))

export const CALLBACK_EVENT_TYPES = [
  'turn.waiting',
  'turn.completed',
  'turn.failed',
  'thread.completed',
  'loop.stopped',
  'work.failed',
] as const
export type CallbackEventType = (typeof CALLBACK_EVENT_TYPES)[number]

/** The `callback` field of session settings. */
export const CallbackSettingsSchema = lazySchema(() =>
  z
    .strictObject({
      url: z
        .url({
          protocol: /^https?$/,
          error: 'must be an https URL (http only if the operator allows it)',
        })
        .max(2048)
        .describe(
          'Where notices are POSTed (Standard Webhooks-signed). https only, unless the operator allows http (TURNLINE_CALLBACK_ALLOW_HTTP).',
        ),
    })
    .describe(
      'Completion callback: a signed notice when a turn waits for approval or input, completes or fails, and when the thread completes.',
    ),
)
export type CallbackSettings = z.infer<typeof CallbackSettingsSchema>

/** What a waiting turn waits for: a tool call's approval, a plan's, or the next `POST …/turns`. */
export const WAITING_FOR = ['approval', 'plan_approval', 'continue'] as const

/** The body of every notice: Standard Webhooks' `{type, timestamp, data}`. */
export const CallbackNoticeSchema = lazySchema(() =>
  z
    .object({
      type: z.enum(CALLBACK_EVENT_TYPES).describe('What happened.'),
      timestamp: Rfc3339Schema.describe('When the event was committed.'),
      data: z
        .object({
          session_id: z
            .string()
            .optional()
            .describe(
              'The session (absent only on the `loop.stopped` of a run that stopped before any step had a session, as `seq` and `events_url`).',
            ),
          turn_id: z
            .string()
            .optional()
            .describe('The turn (absent for a thread ended between turns).'),
          idempotency_key: z
            .string()
            .optional()
            .describe(
              "The Idempotency-Key of the call that committed the event (a background run's: the `idempotency_key` of its 202); absent for a call without one.",
            ),
          status: z
            .enum(['completed', 'failed', 'waiting', 'awaiting_approval', 'terminal'])
            .describe("The turn's status as `POST …/turns` answers it."),
          seq: z
            .number()
            .int()
            .nonnegative()
            .optional()
            .describe('Seq of the event reported (the last of its batch for turn.waiting).'),
          waiting_for: z.enum(WAITING_FOR).optional().describe('turn.waiting only.'),
          result: z
            .string()
            .optional()
            .describe('The latest assistant text (turn.completed, thread.completed).'),
          message: z.string().optional().describe('What went wrong (turn.failed, work.failed).'),
          subtype: z.string().optional().describe('thread.completed only.'),
          outcome_code: z.string().optional().describe('thread.completed only.'),
          usage: UsageSchema.optional().describe(
            "The turn's usage (the thread's for thread.completed).",
          ),
          cost_usd: z
            .number()
            .nonnegative()
            .optional()
            .describe("The session's cost so far, when priced."),
          events_url: z
            .string()
            .optional()
            .describe(
              "The session's events feed (absolute with TURNLINE_PUBLIC_URL); `?after=<seq - 1>` reads from this event on.",
            ),
          loop: z
            .object({
              loop_id: z.string().describe('The loop.'),
              run_id: z.string().describe('The run that stopped.'),
              reason: z.string().describe('Why it stopped (`run.stop_reason`).'),
              status: z.string().describe("The loop's status."),
              budget_status: z.string().describe("The loop's budget status."),
              step_index: z.number().int().nonnegative().describe('Steps done.'),
              total_cost_usd: z.number().nonnegative().describe('Cost of all steps so far.'),
              message: z.string().optional().describe('What stopped it, in words.'),
            })
            .optional()
            .describe(
              'loop.stopped only: the loop run (the session is its newest step; none before its first).',
            ),
          work: z
            .object({
              work_id: z.string().describe('The id the 202 answered (`work_id`).'),
              source: z
                .string()
                .optional()
                .describe(
                  'What asked for it: `turns`, `exec`, `webhook`, `loops`, `responses` (absent when its stored record could not be read).',
                ),
              code: z.string().describe('Why it failed: an error code (`quota_exceeded`, …).'),
              message: z.string().describe('Why it failed, in words.'),
              attempts: z.number().int().nonnegative().describe('Runs that ended in a fault.'),
              created_at: Rfc3339Schema.optional().describe(
                'When the work was accepted (its 202; absent when its stored record could not be read).',
              ),
              loop_id: z.string().optional().describe('The loop, for a loop step.'),
            })
            .optional()
            .describe(
              "work.failed only: background work that ended failed without a turn reporting it (it waited for its tenant's daily quota until its maximum age, was refused, or kept faulting).",
            ),
        })
        .describe('What the notice reports.'),
    })
    .meta({ id: 'CallbackNotice' }),
)
export type CallbackNotice = z.infer<typeof CallbackNoticeSchema>

export const CALLBACK_BATCH_FORMAT = 'turnline.callback_batch'
export const CALLBACK_BATCH_VERSION = 1

/**
 * `<prefix>/.turnline/callbacks/<tenant>/<workspace>/<session>/<batch:010d>.json`: written
 * create-only before a batch that may report something is committed, deleted once every notice
 * of that batch is delivered or given up. The sweep lists these: whatever a crash left undone
 * (notices never recorded, deliveries never finished) is found from them.
 */
export const CallbackBatchSchema = lazySchema(() =>
  z.object({
    format: z.literal(CALLBACK_BATCH_FORMAT),
    version: z.literal(CALLBACK_BATCH_VERSION),
    tenant: z.string().min(1),
    workspace: z.string().min(1),
    session_id: z.string().min(1),
    batch: z.number().int().nonnegative(),
    url: z.url(),
    created_at: Rfc3339Schema,
    /**
     * Set on the marker of one `work.failed` notice (`work-<work_id>.json`): it reports a work
     * record, not a batch (`batch` is the session's last batch when it was recorded).
     */
    work_id: WorkIdSchema.optional(),
  }),
)
export type CallbackBatch = z.infer<typeof CallbackBatchSchema>

export const CALLBACK_DELIVERY_FORMAT = 'turnline.callback_delivery'
export const CALLBACK_DELIVERY_VERSION = 1

export const DeliveryAttemptSchema = lazySchema(() =>
  z
    .object({
      at: Rfc3339Schema.describe('When the attempt started.'),
      status_code: z.number().int().optional().describe("The receiver's HTTP status."),
      error: z
        .string()
        .optional()
        .describe('Why the attempt failed without an answer (refused, timed out, …).'),
      duration_ms: z.number().int().nonnegative().describe('How long the attempt took.'),
    })
    .meta({ id: 'CallbackAttempt' }),
)

/**
 * `callbacks/<batch:010d>-<type>.json` in the session's folder (`callbacks/work-<work_id>-<type>.json`
 * for a `work.failed` notice): one notice and its delivery,
 * created create-only (the same key whoever records it), then replaced by compare-and-swap:
 * a claim (a lease: `claim.until`) before each attempt, the attempt's outcome after it.
 */
export const CallbackDeliverySchema = lazySchema(() =>
  z
    .object({
      format: z.literal(CALLBACK_DELIVERY_FORMAT),
      version: z.literal(CALLBACK_DELIVERY_VERSION),
      id: z
        .string()
        .regex(/^msg_[0-9a-f]{32}$/)
        .describe('The `webhook-id` of every attempt.'),
      type: z.enum(CALLBACK_EVENT_TYPES),
      batch: z.number().int().nonnegative(),
      /** A `work.failed` notice's work (key `callbacks/work-<work_id>-<type>.json`). */
      work_id: WorkIdSchema.optional(),
      url: z.url(),
      /** The exact body of every attempt (the signature covers these bytes). */
      body: z.string(),
      state: z.enum(['pending', 'delivered', 'failed']).describe('`failed`: given up or refused.'),
      created_at: Rfc3339Schema,
      next_attempt_at: Rfc3339Schema.optional().describe('When the next attempt is due (pending).'),
      finished_at: Rfc3339Schema.optional(),
      /** Why a failed delivery stopped. */
      reason: z.string().optional(),
      attempts: z.array(DeliveryAttemptSchema),
      claim: z.object({ owner: z.string(), until: Rfc3339Schema }).optional(),
    })
    .meta({ id: 'CallbackDelivery' }),
)
export type CallbackDelivery = z.infer<typeof CallbackDeliverySchema>
export type DeliveryAttempt = z.infer<typeof DeliveryAttemptSchema>

const batchCodec = documentCodec(CallbackBatchSchema, {
  format: CALLBACK_BATCH_FORMAT,
  version: CALLBACK_BATCH_VERSION,
  what: 'callback batch marker',
})
const deliveryCodec = documentCodec(CallbackDeliverySchema, {
  format: CALLBACK_DELIVERY_FORMAT,
  version: CALLBACK_DELIVERY_VERSION,
  what: 'callback delivery',
})

/** Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export const parseCallbackBatch: (input: Uint8Array | string) => CallbackBatch = batchCodec.parse
export const serializeCallbackBatch: (value: CallbackBatch) => string = batchCodec.serialize
/** Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export const parseCallbackDelivery: (input: Uint8Array | string) => CallbackDelivery =
  deliveryCodec.parse
export const serializeCallbackDelivery: (value: CallbackDelivery) => string =
  deliveryCodec.serialize

/** One delivery as `GET /v1/sessions/{id}/deliveries` shows it. */
export const DeliveryViewSchema = lazySchema(() =>
  z
    .object({
      id: z.string().describe('The `webhook-id` of every attempt.'),
      type: z.enum(CALLBACK_EVENT_TYPES).describe('What the notice reports.'),
      work_id: z
        .string()
        .optional()
        .describe('`work.failed` only: the background work it reports (`work_id` of its 202).'),
      state: z
        .enum(['pending', 'delivered', 'failed'])
        .describe(
          '`pending` (due again at `next_attempt_at`), `delivered`, or `failed` (refused or given up: `reason`).',
        ),
      url: z.string().describe('Where it is POSTed.'),
      created_at: Rfc3339Schema.describe('When the notice was recorded.'),
      next_attempt_at: Rfc3339Schema.optional().describe('When the next attempt is due (pending).'),
      finished_at: Rfc3339Schema.optional().describe('When it was delivered or given up.'),
      reason: z
        .string()
        .optional()
        .describe('Why it failed: refused, or given up after its attempts.'),
      attempts: z.array(DeliveryAttemptSchema).describe('Every attempt, oldest first.'),
      notice: CallbackNoticeSchema.describe('The body POSTed (the same bytes every attempt).'),
    })
    .meta({ id: 'CallbackDeliveryView' }),
)
export type DeliveryView = z.infer<typeof DeliveryViewSchema>

export const DeliveryListSchema = lazySchema(() =>
  z
    .object({ deliveries: z.array(DeliveryViewSchema).describe('Oldest first.') })
    .meta({ id: 'CallbackDeliveryList' }),
)
export type DeliveryList = z.infer<typeof DeliveryListSchema>
