import * as z from 'zod'
import { FrozenOrientationSchema, OrientReasonSchema } from './agent-state.ts'
import { BUDGET_STATUSES } from './budget-status.ts'
import { ERROR_CODES } from './errors.ts'
import { HandoffRequestSchema } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'
import { LoopRunStateSchema, LoopStepRecordSchema } from './loop-state.ts'
import { SessionConfigSchema } from './session-config.ts'
import { ThreadEventSchema } from './thread-event.ts'
import { TurnInputRecordSchema } from './turn-input-record.ts'
import { UsageSchema } from './usage.ts'

export {
  ArtifactListSchema,
  ArtifactViewSchema,
  HealthSchema,
  ResponseDeletedSchema,
  ResponseResourceSchema,
  ServiceIndexSchema,
} from './resource-responses.ts'

/**
 * The response bodies of the HTTP API (v1) as zod schemas, the one place they are written: the
 * OpenAPI document is generated from them (closed objects, so that
 * test/integration/http-openapi-answers.test.ts, which checks real answers against the document,
 * catches an undocumented field); the service builds them as the TypeScript types next to each
 * (api.ts, artifacts.ts, loop-state.ts …); the typed client reads answers with tolerant copies
 * of them (`wire-responses.ts`).
 */

const Count = lazySchema(() => z.number().int().nonnegative())
const Id = (description: string) => z.string().describe(description)

export const ErrorBodySchema = lazySchema(() =>
  z
    .object({
      error: z
        .object({
          code: z.enum(ERROR_CODES).describe('Stable machine-readable error code.'),
          message: z.string().describe('What went wrong, naming the offending field or value.'),
          details: z
            .record(z.string(), z.unknown())
            .optional()
            .describe(
              'Structured details: `field` or `issues` for invalid input, limits, reasons.',
            ),
        })
        .describe('The error.'),
    })
    .meta({
      id: 'Error',
      description: 'Every error answer: `{"error":{"code","message","details?"}}`.',
    }),
)

/** The error answers of `/v1/responses`: the Open Responses envelope (docs/http-api.md). */
export const OpenResponsesErrorBodySchema = lazySchema(() =>
  z
    .object({
      error: z
        .object({
          type: z
            .enum([
              'invalid_request',
              'not_found',
              'too_many_requests',
              'model_error',
              'server_error',
            ])
            .describe("The specification's error category."),
          code: z.enum(ERROR_CODES).describe("Turnline's machine-readable error code."),
          param: z
            .string()
            .describe('The offending request field (`input[1].role`); `""` when none is.'),
          message: z.string().describe('What went wrong, naming the offending field or value.'),
          details: z
            .record(z.string(), z.unknown())
            .optional()
            .describe('Structured details, as in the error of the other routes.'),
        })
        .describe('The error.'),
    })
    .meta({
      id: 'OpenResponsesError',
      description:
        'Every error answer of `/v1/responses`: `{"error":{"type","code","param","message"}}`.',
    }),
)

export const TURN_STATUSES = [
  'completed',
  'failed',
  'waiting',
  'awaiting_approval',
  'terminal',
] as const

export const TurnResponseSchema = lazySchema(() =>
  z
    .object({
      turn_id: Id('The turn this call stepped (`turn-<n>`).'),
      status: z
        .enum(TURN_STATUSES)
        .describe(
          '`completed`: the turn answered; `failed`: it ended with an error; `waiting`: a command still runs (call again without input); `awaiting_approval`: a tool call needs a permission answer; `terminal`: the session has ended.',
        ),
      events: z
        .array(ThreadEventSchema)
        .describe('The bare ThreadEvents this call committed, in order.'),
      next_seq: Count.describe('The seq the next event of the session will get.'),
      warnings: z
        .array(z.string())
        .optional()
        .describe('Non-fatal notices (budget warnings, pricing unavailable).'),
    })
    .meta({ id: 'TurnResponse', description: 'The outcome of one call that stepped a session.' }),
)

const SessionStatus = lazySchema(() =>
  z.enum(['active', 'completed']).describe('`completed` after thread.completed.'),
)

export const CreateSessionResponseSchema = lazySchema(() =>
  z
    .object({
      session_id: Id('The session id (the path segment of every session route).'),
      thread_id: Id('The VT Code thread id of the session.'),
      status: SessionStatus,
    })
    .meta({ id: 'CreateSessionResponse', description: 'A session just created.' }),
)

const ActivityState = lazySchema(() =>
  z.enum(['open', 'waiting', 'awaiting_approval', 'awaiting_plan_approval']),
)
const TurnState = lazySchema(() => z.enum(['running', 'interrupted']))

const summaryFields = {
  session_id: Id('The session id.'),
  thread_id: Id('The VT Code thread id.'),
  workspace: Id('The workspace the session runs in.'),
  status: SessionStatus,
  created_at: z.string().describe('RFC 3339 time of thread.started.'),
  updated_at: z.string().describe('RFC 3339 time of the last commit.'),
  turn_count: Count.describe('Turns started so far.'),
  event_count: Count.describe('Events committed so far.'),
  last_seq: z.number().int().min(-1).describe('Seq of the newest event (-1 before any).'),
  title: z
    .string()
    .optional()
    .describe(
      "The session's first recorded turn input (its text, white space collapsed, at most 120 characters); absent until a turn recorded text.",
    ),
}

export const SessionSummarySchema = lazySchema(() =>
  z
    .object({
      ...summaryFields,
      last_activity_at: z
        .string()
        .optional()
        .describe(
          "RFC 3339 time of the session's last activity, what a listing is ordered by: its creation, or the end of the last call that committed to it (a turn, an approval, a cancel); present in listings.",
        ),
      activity_state: ActivityState.optional().describe(
        'In listings: what the session waits for between calls, as `activity.state` of `GET /v1/sessions/{id}` says it; absent when no turn is open and no plan waits.',
      ),
      turn_state: TurnState.optional().describe(
        'In listings: as `activity.turn_state` of `GET /v1/sessions/{id}`: `running` while an instance works on the open turn, `interrupted` when the turn is `open` and nobody does (resume it with `POST …/turns`).',
      ),
    })
    .meta({ id: 'SessionSummary', description: 'A listed session: what its manifest says.' }),
)

export const SessionListSchema = lazySchema(() =>
  z
    .object({
      sessions: z
        .array(SessionSummarySchema)
        .describe('One page, by last activity: the latest first (`order=newest`) or the earliest.'),
      cursor: z
        .string()
        .optional()
        .describe('Opaque: pass it back as `cursor` for the next page; absent on the last page.'),
    })
    .meta({ id: 'SessionList', description: "One page of the tenant's sessions of a workspace." }),
)

export const TurnListSchema = lazySchema(() =>
  z
    .object({
      turns: z
        .array(
          z.object({
            turn_id: z.string().optional().describe('The turn id (`turn-<n>`).'),
            seq: Count.describe('Seq of its `turn.started` event.'),
            started_at: z.string().describe('RFC 3339 time the turn started (its first commit).'),
            input: TurnInputRecordSchema.omit({ version: true })
              .optional()
              .describe(
                'What the turn was asked: `input` as the request gave it, `follow_ups` applied as it started; absent when nothing was recorded (a turn from before inputs were recorded, or of a newer record version).',
              ),
          }),
        )
        .describe('In order, oldest first.'),
      cursor: z
        .string()
        .optional()
        .describe('Opaque: pass it back as `cursor` for the next page; absent on the last page.'),
    })
    .meta({ id: 'TurnList', description: "One page of a session's turns with their inputs." }),
)

export const WorkspaceListSchema = lazySchema(() =>
  z
    .object({
      workspaces: z
        .array(
          z.object({
            workspace: z.string().describe('The workspace name.'),
            sessions: z.number().int().nonnegative().describe('How many sessions it holds.'),
          }),
        )
        .describe('In name order.'),
    })
    .meta({
      id: 'WorkspaceList',
      description: "The tenant's workspaces with their session counts.",
    }),
)

const LimitMax = lazySchema(() =>
  z.number().nonnegative().optional().describe('The limit; absent when none is set.'),
)
const Limit = (what: string) =>
  z
    .object({ used: z.number().nonnegative().describe(`${what} so far.`), max: LimitMax })
    .describe(`${what} against its limit.`)

export const BudgetReportSchema = lazySchema(() =>
  z
    .object({
      status: z.enum(BUDGET_STATUSES).describe('The first limit reached, or `ok`.'),
      steps: Limit('Steps (turns)'),
      tokens: Limit('Tokens (input + output)'),
      cost_usd: z
        .object({
          spent: z
            .number()
            .nonnegative()
            .optional()
            .describe(
              'Cost in US dollars so far (absent when unknown, e.g. no pricing for the model).',
            ),
          max: LimitMax,
        })
        .describe('Cost in US dollars against its limit.'),
    })
    .meta({
      id: 'BudgetReport',
      description: 'Where a session or loop stands against its budget.',
    }),
)

export const SessionViewSchema = lazySchema(() =>
  z
    .object({
      ...summaryFields,
      num_turns: Count.describe('Model requests so far (thread.completed `num_turns`).'),
      usage: UsageSchema.describe('Token usage so far.'),
      reasoning_tokens: Count.optional().describe(
        'Reasoning tokens within `usage.output_tokens`, when the provider reported them.',
      ),
      estimated_tokens: Count.optional().describe(
        'Tokens of `usage` estimated with a tokenizer because the provider reported no usage.',
      ),
      total_cost_usd: z
        .number()
        .nonnegative()
        .optional()
        .describe('Cost so far in US dollars; absent when the pricing is unknown.'),
      model: z
        .string()
        .optional()
        .describe("The model in force: the session's own, else the deployment default."),
      price: z
        .object({
          input: z.number().nonnegative().describe('USD per input token.'),
          output: z.number().nonnegative().describe('USD per output token.'),
          cached_input: z
            .number()
            .nonnegative()
            .optional()
            .describe("USD per input token read from the provider's prompt cache."),
          cache_write: z
            .number()
            .nonnegative()
            .optional()
            .describe("USD per input token written to the provider's prompt cache."),
        })
        .optional()
        .describe('USD per token the cost is estimated with; absent when unknown.'),
      config: SessionConfigSchema.describe('The settings the session was created with.'),
      budget: BudgetReportSchema.describe('Steps, tokens and cost against the session limits.'),
      activity: z
        .object({
          state: ActivityState.describe(
            '`waiting`: a command still runs in the sandbox (continue with `POST …/turns` without input, or the runner continues it when the command exits); `awaiting_approval`: a tool call waits for `POST …/permissions`; `awaiting_plan_approval`: a plan waits for `POST …/plan-approval`; `open`: a turn committed part of its work and has not ended (it may be running now).',
          ),
          turn_id: z.string().describe('The open turn (the planning turn of a waiting plan).'),
          item_id: z.string().optional().describe('The tool invocation item waited on.'),
          tool_name: z.string().optional().describe('Its tool.'),
          command: z.string().optional().describe('Its command line, for a sandbox command.'),
          since: z
            .string()
            .optional()
            .describe(
              'RFC 3339: when the command started, or the approval was asked for (elapsed time = now − since).',
            ),
          turn_state: TurnState.optional().describe(
            "From the session's lease: `running` while an instance holds it and renews it (the turn is being worked on now); `interrupted` when the turn is `open` but nobody holds the lease or its holder stopped renewing it (the instance running it died; the next `POST …/turns` resumes the turn). Absent for a turn waiting on a command or a person with nobody working on it.",
          ),
        })
        .optional()
        .describe(
          'What the session is doing between calls, from its committed state; absent when no turn is open and no plan waits. A turn running right now shows once it commits (before its tools run); its events are the live view.',
        ),
    })
    .meta({
      id: 'SessionView',
      description: 'One session: its manifest summary, usage and config.',
    }),
)

export const SequencedEventSchema = lazySchema(() =>
  z
    .object({
      seq: Count.describe('Position of the event in the session (0-based, gapless).'),
      schema_version: z.literal('0.11.0').describe('VT Code event schema version.'),
      event: ThreadEventSchema.describe('The bare ThreadEvent.'),
    })
    .meta({ id: 'SequencedEvent', description: 'One line of the NDJSON events feed.' }),
)

export const IntentResponseSchema = lazySchema(() =>
  z
    .object({
      id: z.string().describe('UUIDv4 of the intent; its user message carries it as `intent_id`.'),
      pending: Count.describe('Intents now pending (queued and in flight), this one included.'),
    })
    .meta({ id: 'IntentResponse', description: 'A steering follow-up accepted into the queue.' }),
)

export const ForkResponseSchema = lazySchema(() =>
  CreateSessionResponseSchema.extend({
    forked_from: Id('The source session.'),
  }).meta({ id: 'ForkResponse', description: 'The new session a fork created.' }),
)

export const VerifyResponseSchema = lazySchema(() =>
  TurnResponseSchema.extend({
    verification: z
      .object({
        id: z.string().describe('Id of the verification (the harness items carry it).'),
        verdict: z.enum(['approved', 'rejected']).describe("The verifier's verdict."),
        issues: z
          .array(z.string())
          .describe('Concrete issues the verifier named (empty when approved).'),
        reasoning: z.string().describe("The verifier's reasoning (its final answer, cut)."),
        paths: z.array(z.string()).describe('The files verified, relative to the workspace.'),
        turn_id: z.string().optional().describe('The turn whose changes were verified.'),
        verifier_session: z
          .string()
          .optional()
          .describe("The verifier's own session (its events show what it read and tried)."),
      })
      .describe('The verdict.'),
  }).meta({
    id: 'VerifyResponse',
    description: "The proposer's committed events (the harness items) and the verdict.",
  }),
)

export const HandoffResponseSchema = lazySchema(() =>
  z
    .object({
      handoff: HandoffRequestSchema.describe('The HandoffRequest as stored.'),
      prompt: z
        .string()
        .describe('The handoff as the next agent reads it (`## HANDOFF FROM PREVIOUS AGENT` …).'),
      path: z.string().describe("Where it was stored for the workspace's next agent."),
      session: CreateSessionResponseSchema.extend({
        handed_off_from: z.string().describe('The source session.'),
        duplicate: z
          .boolean()
          .optional()
          .describe('True when an Idempotency-Key retry answered the session started before.'),
      })
        .optional()
        .describe("The next agent's session, when `start` was set."),
      source_completion: TurnResponseSchema.optional().describe(
        "The source's terminal turn, when `end_source` was set.",
      ),
      warnings: z.array(z.string()).optional().describe('Non-fatal notices.'),
    })
    .meta({ id: 'HandoffResponse', description: "A session's handoff to the next agent." }),
)

export const OrientationViewSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().describe('The session.'),
      orientation: FrozenOrientationSchema.nullable().describe(
        'The section the system prompt carries now; null when none was frozen yet.',
      ),
      pending: OrientReasonSchema.optional().describe(
        'The orient phase waits for the next new turn (and this is why).',
      ),
      preview: FrozenOrientationSchema.optional().describe(
        'With `?preview=1`: what an orient phase would build now (not frozen).',
      ),
      warnings: z
        .array(z.string())
        .optional()
        .describe('Artifacts that could not be read while previewing.'),
    })
    .meta({ id: 'OrientationView', description: "A session's orientation context." }),
)

export const LoopViewSchema = lazySchema(() =>
  LoopRunStateSchema.extend({
    budget_report: BudgetReportSchema.describe('The loop against its budget.'),
  }).meta({
    id: 'LoopView',
    description: 'A loop as the API shows it: its state and budget report.',
  }),
)

export const LoopStepResponseSchema = lazySchema(() =>
  z
    .object({
      loop: LoopViewSchema.describe('The loop after the call.'),
      step: LoopStepRecordSchema.optional().describe(
        'The step that ran (absent for a control, or when the budget stopped the loop first).',
      ),
      waiting: z
        .object({
          session_id: z.string().describe("The step's session."),
          status: z.string().describe('Why it waits (`waiting` or `awaiting_approval`).'),
        })
        .optional()
        .describe(
          'A step whose session waits (a command still runs, or a tool call needs approval).',
        ),
    })
    .meta({ id: 'LoopStepResponse', description: 'The outcome of one loop step call.' }),
)

export const WebhookRunResponseSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().describe('The automation session (derived from the delivery id).'),
      duplicate: z.boolean().describe('True for a redelivery: the first run answers again.'),
      turn: TurnResponseSchema.describe("The run's turn."),
    })
    .meta({
      id: 'WebhookRunResponse',
      description: 'The automation run a webhook delivery started.',
    }),
)

export const RunnerCallbackResponseSchema = lazySchema(() =>
  z
    .object({
      resumed: z.boolean().describe('Whether a turn waiting on the command was continued.'),
      status: z.enum(TURN_STATUSES).optional().describe('The status of the continued turn.'),
    })
    .meta({ id: 'RunnerCallbackResponse', description: 'What a runner exit notice did.' }),
)
