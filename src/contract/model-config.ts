import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * A session's model (`model` of `POST /v1/sessions` when it is more than a name, and the model a
 * handoff or a verifier runs with): which model, through which wire API, at what price, and the
 * sampling and reasoning settings sent with every request.
 */

/** Reasoning effort (`none` only where the provider has it, e.g. OpenAI's newer models). */
export const ReasoningEffortSchema = lazySchema(() =>
  z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']),
)
export type ReasoningEffort = z.infer<typeof ReasoningEffortSchema>

/**
 * The wire API a session's model is asked through: OpenAI Chat Completions (and the compatible
 * servers), OpenAI Responses, or Anthropic's Messages API (Claude, also on Bedrock and Vertex).
 */
export const ModelApiSchema = lazySchema(() => z.enum(['chat', 'responses', 'anthropic']))
export type ModelApi = z.infer<typeof ModelApiSchema>

export const ModelSettingsSchema = lazySchema(() =>
  z
    .strictObject({
      name: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe('Absent → the deployment default (TURNLINE_MODEL).'),
      api: ModelApiSchema.optional().describe(
        "`chat`, `responses` or `anthropic` (the Messages API); absent → the deployment's API (`TURNLINE_MODEL_API`), as for a model given by name.",
      ),
      price: z
        .strictObject({
          input: z.number().nonnegative().describe('USD per input token.'),
          output: z.number().nonnegative().describe('USD per output token.'),
          cached_input: z
            .number()
            .nonnegative()
            .optional()
            .describe("USD per input token read from the provider's prompt cache; absent → input."),
          cache_write: z
            .number()
            .nonnegative()
            .optional()
            .describe(
              "USD per input token written to the provider's prompt cache; absent → input.",
            ),
        })
        .optional()
        .describe(
          'USD per token; overrides the built-in price table (e.g. for a self-hosted model).',
        ),
      max_output_tokens: z
        .number()
        .int()
        .positive()
        .max(1_000_000)
        .optional()
        .describe("Cap on the tokens of one model answer; absent → the provider's default."),
      temperature: z
        .number()
        .min(0)
        .max(2)
        .optional()
        .describe(
          "Sampling temperature sent with every model request; absent → the provider's default.",
        ),
      top_p: z
        .number()
        .min(0)
        .max(1)
        .optional()
        .describe(
          "Nucleus sampling sent with every model request; absent → the provider's default.",
        ),
      context_window: z
        .number()
        .int()
        .positive()
        .max(100_000_000)
        .optional()
        .describe(
          "The provider's context capacity in tokens; absent → the built-in table, else unknown.",
        ),
      reasoning_effort: ReasoningEffortSchema.describe(
        'sent as reasoning_effort (Chat) or reasoning.effort (Responses); none only where the provider has it',
      )
        .optional()
        .describe('Sent as `reasoning_effort` (Chat) or `reasoning.effort` (Responses).'),
      reasoning_summary: z
        .enum(['auto', 'concise', 'detailed'])
        .describe('Responses API: reasoning.summary, streamed as reasoning items')
        .optional()
        .describe(
          'Responses API only: ask for reasoning summaries (`reasoning.summary`), streamed as `reasoning` items. Some accounts must be verified by the provider to receive them.',
        ),
    })
    .superRefine((settings, ctx) => {
      // Anthropic's Messages API (version 2026-10-21, the SDK's) refuses every sampling parameter.
      if (settings.api !== 'anthropic') return
      for (const field of ['temperature', 'top_p'] as const) {
        if (settings[field] === undefined) continue
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `the Anthropic Messages API takes no ${field}: leave it out (use reasoning_effort)`,
        })
      }
    }),
)
/** Model settings as the session gives them (name and api may be left to the deployment). */
export type ModelSettingsInput = z.infer<typeof ModelSettingsSchema>
/** Resolved model settings: the name and API are known. */
export type ModelSettings = ModelSettingsInput & { name: string; api: ModelApi }
