import * as z from 'zod'
import { linearRegexProblem } from '../shared/linear-regex.ts'
import { CallbackSettingsSchema } from './callback-delivery.ts'
import { ClientToolSchema } from './client-tool.ts'
import { TurnlineError } from './errors.ts'
import { HarnessSchema } from './harness-config.ts'
import { HooksSchema, matcherProblem } from './hook-config.ts'
import { HttpToolSchema } from './http-tool-config.ts'
import { lazySchema } from './lazy-schema.ts'
import { LimitsSchema } from './limits-config.ts'
import { McpServersSchema } from './mcp-config.ts'
import { ModelSettingsSchema } from './model-config.ts'
import { PermissionsSchema } from './permissions-config.ts'
import { SandboxSettingsSchema } from './sandbox-config.ts'
import { ToolChoiceSchema } from './tool-choice.ts'

/**
 * What a session is created with (`POST /v1/sessions`), validated at the HTTP boundary and
 * stored once in the engine state of batch 0. Unknown keys are rejected so typos surface. Its
 * parts have files of their own: the model (`model-config.ts`), HTTP tools
 * (`http-tool-config.ts`), limits (`limits-config.ts`), harness settings (`harness-config.ts`),
 * tool permissions (`permissions-config.ts`) and the sandbox (`sandbox-config.ts`).
 */
export const SessionConfigSchema = lazySchema(() =>
  z.strictObject({
    workspace: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'use 1–128 characters from A-Z a-z 0-9 . _ -')
      .refine((value) => !value.includes('..'), 'must not contain ".."')
      .default('default')
      .describe(
        'The workspace (sandbox folder and `.vtcode/` artifacts) the session runs in; default `default`.',
      ),
    model: z
      .union([z.string().min(1).max(200), ModelSettingsSchema])
      .optional()
      .describe('A model name, or settings; absent → the deployment default (TURNLINE_MODEL).'),
    instructions: z
      .string()
      .max(200_000)
      .optional()
      .describe('System instructions added to the prompt.'),
    output_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe(
        'JSON Schema of the final answer (structured output, like `codex exec --output-schema`): sent to the provider as a strict JSON-schema response format with every model request.',
      ),
    tools: z
      .array(HttpToolSchema)
      .max(128)
      .default([])
      .describe('Session-defined HTTP tools the model may call.'),
    client_tools: z
      .array(ClientToolSchema)
      .max(128)
      .optional()
      .describe(
        'Function tools the client runs (Open Responses `function` tools): a call ends the turn `waiting` on the client.',
      ),
    tool_choice: ToolChoiceSchema.optional().describe(
      'Which tools the model may or must call: `auto` (absent), `none`, `required`, `{type: "function", name}`, or `{type: "allowed_tools", mode, tools}`. A forced choice holds for the first model request of each turn (until the model has called a tool); the later requests of the turn are `auto`.',
    ),
    parallel_tool_calls: z
      .boolean()
      .optional()
      .describe(
        'false: the model calls at most one tool per answer (sent to the provider). Absent or true: the provider may call several at once.',
      ),
    mcp_servers: McpServersSchema.describe(
      'MCP servers over Streamable HTTP; their tools are read at the first turn and after tools/list_changed',
    )
      .optional()
      .describe('MCP servers over Streamable HTTP; their tools appear as `mcp__<server>__<tool>`.'),
    limits: LimitsSchema.default({ budget_warning_threshold: 0.75 }).describe(
      'Turn, token, cost and time limits of the session.',
    ),
    harness: HarnessSchema.default(HarnessSchema.parse({})).describe(
      'Harness settings: compaction, context resets, exports.',
    ),
    permissions: PermissionsSchema.default(PermissionsSchema.parse({})).describe(
      'The tool permission policy.',
    ),
    hooks: HooksSchema.describe('Lifecycle hooks (HTTP or command) by event.'),
    sandbox: SandboxSettingsSchema.optional().describe('Absent: the defaults (no network).'),
    callback: CallbackSettingsSchema.optional(),
    metadata: z
      .record(z.string().max(128), z.string().max(1024))
      .default({})
      .describe('Free-form string labels stored with the session.'),
  }),
)
export type SessionConfigInput = z.input<typeof SessionConfigSchema>
export type SessionConfig = z.infer<typeof SessionConfigSchema>

/**
 * Validates a create-session body: `invalid_input` (400) naming every problem. Its patterns
 * must also suit the linear-time engine they are matched on (`linearPatternIssues`), which a
 * stored session's need not (read through the schema alone, as they were written).
 */
export function readSessionConfig(body: unknown): SessionConfig {
  const result = SessionConfigSchema.safeParse(body)
  const issues = result.success
    ? linearPatternIssues(result.data)
    : result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }))
  if (issues.length > 0 || !result.success) {
    const listed = result.success
      ? issues.map((i) => `✖ ${i.message}\n  → at ${i.path}`).join('\n')
      : z.prettifyError(result.error)
    throw new TurnlineError('invalid_input', `invalid session settings: ${listed}`, {
      details: { issues },
    })
  }
  return result.data
}

/**
 * The hook matchers and the test command pattern a request sends are matched against what the
 * session's tenant names (its tools, its model's commands) on the linear-time engine
 * (src/shared/linear-regex.ts): no back-references or lookarounds, as in VT Code's own.
 */
function linearPatternIssues(config: SessionConfig): { path: string; message: string }[] {
  const issues = config.hooks.flatMap((hook, i) => {
    const problem = hook.matcher === undefined ? undefined : matcherProblem(hook.matcher)
    return problem
      ? [{ path: `hooks.${i}.matcher`, message: `matcher is not usable: ${problem}` }]
      : []
  })
  const problem = linearRegexProblem(config.harness.test_command_pattern)
  if (problem) {
    const message = `not a usable pattern: ${problem}`
    issues.push({ path: 'harness.test_command_pattern', message })
  }
  return issues
}
