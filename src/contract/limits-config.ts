import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/** A session's limits (`limits` of `POST /v1/sessions`): turns, steps, tokens and cost. */
export const LimitsSchema = lazySchema(() =>
  z.strictObject({
    max_turns: z
      .number()
      .int()
      .positive()
      .max(100_000)
      .optional()
      .describe('Model requests allowed in the session (VT Code num_turns).'),
    max_budget_usd: z
      .number()
      .positive()
      .optional()
      .describe('Stop the session once its estimated cost reaches this many US dollars.'),
    budget_warning_threshold: z
      .number()
      .min(0)
      .max(1)
      .default(0.75)
      .describe('Fraction of a limit at which a budget warning is emitted (default 0.75).'),
    max_tokens: z
      .number()
      .int()
      .positive()
      .max(1e12)
      .optional()
      .describe('Total tokens (input + output) the session may use: `token_limit_reached`.'),
    max_steps: z
      .number()
      .int()
      .positive()
      .max(100_000)
      .optional()
      .describe('Turns the session may start: `step_limit_reached` (VT Code `error_max_turns`).'),
  }),
)
export type Limits = z.infer<typeof LimitsSchema>
