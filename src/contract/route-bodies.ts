import * as z from 'zod'
import { LimitsChangeSchema } from './api.ts'
import { lazySchema } from './lazy-schema.ts'
import { SessionConfigSchema } from './session-config.ts'
import { TurnInputSchema } from './turn-input.ts'

/** Request bodies of the routes that take no schema of their own elsewhere in the contract. */

/** `POST /v1/exec` body: a session config plus the prompt of its one turn. */
export const ExecRequestSchema = lazySchema(() =>
  SessionConfigSchema.extend({
    prompt: TurnInputSchema.describe(
      'The user message of the one turn: a string, or `input_text` and `input_image` parts.',
    ),
  }),
)

/** `POST …/fork` body: `isolation: "worktree"` puts a sub-agent's sandbox in a git worktree. */
export const ForkRequestSchema = lazySchema(() =>
  z.strictObject({
    isolation: z
      .enum(['none', 'worktree'])
      .optional()
      .describe("`worktree` runs the fork's sandbox in its own git worktree; `none` shares it."),
    limits: LimitsChangeSchema.optional().describe(
      "The fork's limits, each replacing the source's; the fork's counts start at zero.",
    ),
    at_turn: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .optional()
      .describe(
        'Fork from the state after this turn (`turn-<n>` is turn n, as `GET …/turns` lists them): the fork starts with the transcript exactly as that turn left it, and no summary call. The turn must have ended. Absent: the summarized history of the session as it is now.',
      ),
  }),
)
export type ForkRequest = z.infer<typeof ForkRequestSchema>

/** Routes that take no input (`/complete`, `/cancel`): an empty object or no body at all. */
export const EmptyBodySchema = lazySchema(() => z.strictObject({}))
