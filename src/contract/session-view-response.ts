import * as z from 'zod'
import { BudgetReportSchema } from './budget-report.ts'
import { lazySchema } from './lazy-schema.ts'
import { Count } from './response-fields.ts'
import { SessionConfigSchema } from './session-config.ts'
import { ActivityState, summaryFields, TurnState } from './session-responses.ts'
import { UsageSchema } from './usage.ts'

/**
 * `GET /v1/sessions/{id}` (notes: `response-fields.ts`): the session's summary, usage, price,
 * config, budget and what it does between calls.
 */

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
