import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { HooksSchema } from './hook-config.ts'

/**
 * What a session is created with (`POST /v1/sessions`), validated at the HTTP boundary and
 * stored once in the engine state of batch 0. Unknown keys are rejected so typos surface.
 */
const Name = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 characters from A-Z a-z 0-9 _ -')

export const ModelSettingsSchema = z.strictObject({
  name: z.string().min(1).max(200),
  /** Absent → the deployment's API (`TURNLINE_MODEL_API`), as for a model given by name. */
  api: z.enum(['chat', 'responses']).optional(),
  /** USD per token; overrides the built-in price table (e.g. for a self-hosted model). */
  price: z
    .strictObject({ input: z.number().nonnegative(), output: z.number().nonnegative() })
    .optional(),
  max_output_tokens: z.number().int().positive().max(1_000_000).optional(),
  /** Sampling temperature sent with every model request; absent → the provider's default. */
  temperature: z.number().min(0).max(2).optional(),
  /** Nucleus sampling sent with every model request; absent → the provider's default. */
  top_p: z.number().min(0).max(1).optional(),
  /** The provider's context capacity in tokens; absent → the built-in table, else unknown. */
  context_window: z.number().int().positive().max(100_000_000).optional(),
})
export type ModelSettings = z.infer<typeof ModelSettingsSchema>

/** A session-defined action the model may call; POSTed signed to an allow-listed URL. */
export const HttpToolSchema = z.strictObject({
  type: z.literal('http'),
  name: Name,
  description: z.string().max(4000).default(''),
  /** JSON Schema of the arguments object. */
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
  url: z.url({ protocol: /^https?$/ }),
  timeout_ms: z.number().int().positive().max(300_000).optional(),
  /** Read-only tools may run in plan mode and are what permission mode `plan` allows. */
  read_only: z.boolean().default(false),
})
export type HttpTool = z.infer<typeof HttpToolSchema>

export const LimitsSchema = z.strictObject({
  /** Model requests allowed in the session (VT Code num_turns). */
  max_turns: z.number().int().positive().max(100_000).optional(),
  max_budget_usd: z.number().positive().optional(),
  budget_warning_threshold: z.number().min(0).max(1).default(0.75),
})
export type Limits = z.infer<typeof LimitsSchema>

export const HarnessSchema = z.strictObject({
  auto_compaction_enabled: z.boolean().default(true),
  auto_compaction_threshold_tokens: z.number().int().positive().optional(),
  max_context_tokens: z.number().int().positive().default(160_000),
  context_reset_mode: z.enum(['off', 'on_stall', 'on_compaction']).default('off'),
  context_reset_stall_threshold: z.number().int().positive().default(2),
  /** A model or provider change compacts the history for the new model (trigger model_switch). */
  compact_on_model_switch: z.boolean().default(true),
  /**
   * Compaction through the provider (`responses.compact`, mode `provider`) for a model on the
   * Responses API; off, or on the Chat API, compaction is a local summary.
   */
  provider_compaction: z.boolean().default(true),
  /** Tool calls allowed within one turn before it stops (VT Code tool-loop limit). */
  max_tool_loops: z.number().int().positive().max(1000).default(50),
})
export type Harness = z.infer<typeof HarnessSchema>

/**
 * Tool permissions: `deny` wins over `allow`. Modes: `auto` (the default here: a service has no
 * one to ask unless the caller wants it) runs every tool not denied; `default` (VT Code's
 * interactive default) asks — the turn stops `awaiting_approval` — for tools not allowed;
 * `plan` allows read-only tools only. Pattern grammar: docs/permissions.md.
 */
export const PermissionsSchema = z.strictObject({
  allow: z.array(z.string().min(1).max(200)).max(200).default([]),
  deny: z.array(z.string().min(1).max(200)).max(200).default([]),
  mode: z.enum(['default', 'plan', 'auto']).default('auto'),
})
export type Permissions = z.infer<typeof PermissionsSchema>

/** What the session's commands may do beyond their workspace (docs/configuration.md). */
export const SandboxSettingsSchema = z.strictObject({
  /**
   * Commands (and command hooks) get network access. Default false: a sandboxed command sees
   * only its own loopback. The runner's TURNLINE_SANDBOX_NETWORK policy has the last word.
   */
  network: z.boolean().default(false),
})
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>

export const SessionConfigSchema = z.strictObject({
  workspace: z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'use 1–128 characters from A-Z a-z 0-9 . _ -')
    .refine((value) => !value.includes('..'), 'must not contain ".."')
    .default('default'),
  /** A model name, or settings; absent → the deployment default (TURNLINE_MODEL). */
  model: z.union([z.string().min(1).max(200), ModelSettingsSchema]).optional(),
  instructions: z.string().max(200_000).optional(),
  /**
   * JSON Schema of the final answer (structured output, like `codex exec --output-schema`): sent
   * to the provider as a strict JSON-schema response format with every model request.
   */
  output_schema: z.record(z.string(), z.unknown()).optional(),
  tools: z.array(HttpToolSchema).max(128).default([]),
  limits: LimitsSchema.default({ budget_warning_threshold: 0.75 }),
  harness: HarnessSchema.default(HarnessSchema.parse({})),
  permissions: PermissionsSchema.default(PermissionsSchema.parse({})),
  hooks: HooksSchema,
  /** Absent: the defaults (no network). */
  sandbox: SandboxSettingsSchema.optional(),
  metadata: z.record(z.string().max(128), z.string().max(1024)).default({}),
})
export type SessionConfigInput = z.input<typeof SessionConfigSchema>
export type SessionConfig = z.infer<typeof SessionConfigSchema>

/** Validates a create-session body: `invalid_input` (400) naming every problem. */
export function readSessionConfig(body: unknown): SessionConfig {
  const result = SessionConfigSchema.safeParse(body)
  if (!result.success) {
    throw new TurnlineError(
      'invalid_input',
      `invalid session settings: ${z.prettifyError(result.error)}`,
      {
        details: {
          issues: result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
        },
      },
    )
  }
  return result.data
}
