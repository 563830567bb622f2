import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { IdempotencyHeadersSchema } from './route-params.ts'
import { TURN_STATUSES } from './turn-responses.ts'

/**
 * The answers of background turns (docs/http-api.md#background-turns): the 202 of a request
 * that preferred `respond-async` or of a webhook delivery, and the work's status resource.
 */

/** `Prefer: respond-async` (RFC 7240), with the Idempotency-Key a background turn runs under. */
export const BackgroundHeadersSchema = lazySchema(() =>
  IdempotencyHeadersSchema.extend({
    Prefer: z
      .string()
      .max(1024)
      .optional()
      .describe(
        '`respond-async` (RFC 7240): record the turn and answer 202 at once; a worker runs it. Honoured where the server runs a worker (`npm start`, Docker; answered with `Preference-Applied: respond-async`); elsewhere the turn runs in the request as without it.',
      ),
  }),
)

/**
 * `POST /v1/exec`'s headers: `Prefer` may also ask for `keep-alive`, blank lines while the run
 * sends nothing, which bare `vtcode exec --json` lines do not have.
 */
export const ExecHeadersSchema = lazySchema(() =>
  BackgroundHeadersSchema.extend({
    Prefer: z
      .string()
      .max(1024)
      .optional()
      .describe(
        'Comma-separated preferences (RFC 7240). `respond-async`: record the run and answer 202 at once; a worker runs it (where the server runs one; answered with `Preference-Applied: respond-async`). `keep-alive`: a blank line every 15 s while the streamed run sends nothing, so a client can tell a silent run from a dead connection (answered with `Preference-Applied: keep-alive`); without it the stream holds only the bare ThreadEvent lines of `vtcode exec --json`.',
      ),
  }),
)

const WorkLinksSchema = lazySchema(() =>
  z.object({
    status: z.string().describe('`GET` it for where the work stands (WorkStatus).'),
    events: z
      .string()
      .describe(
        "The session's events feed: add `after=<seq>`, `follow=1`, or `Accept: text/event-stream` to follow the run live.",
      ),
  }),
)

export const BackgroundAcceptedSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().describe('The session the turn runs in (for exec, the new one).'),
      work_id: z.string().describe('Names the work in its status resource (from the key).'),
      idempotency_key: z
        .string()
        .describe('The key the turn runs under: the one sent, or one the server made.'),
      duplicate: z.boolean().describe('True when the same work was recorded before (a retry).'),
      status: z.literal('queued').describe('Recorded; a worker runs it.'),
      links: WorkLinksSchema.describe('Where to follow it.'),
    })
    .meta({
      id: 'BackgroundAccepted',
      description: 'A background turn recorded (202): a worker runs it.',
    }),
)

export const LoopStepAcceptedSchema = lazySchema(() =>
  z
    .object({
      loop_id: z.string().describe('The loop.'),
      work_id: z.string().describe('Names the step in `GET /v1/loops/{id}/work/{work_id}`.'),
      idempotency_key: z
        .string()
        .describe('The key the step was recorded under: the one sent, or one the server made.'),
      duplicate: z.boolean().describe('True when the same step was recorded before (a retry).'),
      status: z.literal('queued').describe('Recorded; a worker runs it.'),
      links: z
        .object({
          status: z.string().describe('`GET` it while the step is pending (WorkStatus).'),
          loop: z.string().describe('The loop: its current step, its steps, its status.'),
        })
        .describe('Where to follow it.'),
    })
    .meta({
      id: 'LoopStepAccepted',
      description: "A loop's next step recorded (202): a worker runs it.",
    }),
)

export const LoopRunAcceptedSchema = lazySchema(() =>
  z
    .object({
      loop_id: z.string().describe('The loop.'),
      run_id: z.string().describe("The run (the loop's `run.run_id`)."),
      work_id: z.string().describe('Names the step the run runs first (`GET …/work/{work_id}`).'),
      duplicate: z
        .boolean()
        .describe('True when this run was running already (a retry, or a second `run`).'),
      status: z
        .enum(['running', 'stopped'])
        .describe(
          '`running`: a worker steps the loop; `stopped`: a retried request of a run that ended.',
        ),
      links: z
        .object({
          status: z.string().describe('`GET` it while its step is pending (WorkStatus).'),
          loop: z.string().describe('The loop: its run, current step, steps and status.'),
        })
        .describe('Where to follow it.'),
    })
    .meta({
      id: 'LoopRunAccepted',
      description: 'A loop run started (202): a worker steps the loop until its end.',
    }),
)

export const WebhookAcceptedSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().describe('The automation session (derived from the delivery id).'),
      duplicate: z
        .boolean()
        .describe('True for a redelivery: the first run stands, none is added.'),
      work_id: z.string().describe('Names the run in `GET /v1/sessions/{id}/work/{work_id}`.'),
    })
    .meta({ id: 'WebhookAccepted', description: 'A webhook delivery recorded (202) to run.' }),
)

const WorkErrorSchema = lazySchema(() =>
  z.object({
    code: z.string().describe('The error code (as in error bodies).'),
    message: z.string().describe('What went wrong.'),
    at: z.string().describe('When (RFC 3339).'),
  }),
)

export const WorkStatusSchema = lazySchema(() =>
  z
    .object({
      work_id: z.string().describe('The work, as the 202 named it.'),
      session_id: z.string().describe('Its session.'),
      state: z
        .enum(['queued', 'waiting', 'running', 'done', 'failed'])
        .describe(
          "`queued`: recorded, not started; `waiting`: refused for the tenant's daily quota, it stays pending and is tried again at `waiting.retry_at` until it runs or reaches its maximum age (docs/limits.md); `running`: a worker started its turn (also while the turn of a crashed instance waits to be taken over); `done`: the turn has an outcome; `failed`: it cannot run (`error`).",
        ),
      turn: z
        .object({
          turn_id: z.string().describe('The turn it opened.'),
          status: z.enum(TURN_STATUSES).optional().describe('Its outcome, once done.'),
        })
        .describe('Its turn, once known.')
        .optional(),
      attempts: z.number().int().optional().describe('Runs that ended in a retryable fault.'),
      last_error: WorkErrorSchema.optional().describe('The last retryable fault.'),
      error: WorkErrorSchema.optional().describe('Why it failed (`failed`).'),
      waiting: z
        .object({
          reason: z.literal('quota_exceeded').describe("The tenant's daily quota is used up."),
          message: z.string().describe('The last refusal (which quota, how much is used).'),
          since: z.string().describe('The first refusal (RFC 3339).'),
          retry_at: z.string().describe('The next try, no sooner (RFC 3339).'),
          refusals: z.number().int().describe('Tries refused so far (none counts as a fault).'),
        })
        .optional()
        .describe('Why and until when it waits (`waiting`).'),
    })
    .meta({ id: 'WorkStatus', description: 'Where a background turn stands.' }),
)
