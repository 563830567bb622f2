import * as z from 'zod'
import { CallbackSettingsSchema } from './callback-delivery.ts'
import { ClientToolSchema, ToolNameSchema } from './client-tool.ts'
import { TurnlineError } from './errors.ts'
import { HooksSchema } from './hook-config.ts'
import { lazySchema } from './lazy-schema.ts'
import { McpServersSchema } from './mcp-config.ts'
import { ToolChoiceSchema } from './tool-choice.ts'

/**
 * What a session is created with (`POST /v1/sessions`), validated at the HTTP boundary and
 * stored once in the engine state of batch 0. Unknown keys are rejected so typos surface.
 */
const Name = ToolNameSchema

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

/** A session-defined action the model may call; POSTed signed to an allow-listed URL. */
export const HttpToolSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('http').describe('Always `http`.'),
    name: Name.describe("The tool's name as the model sees it."),
    description: z.string().max(4000).default('').describe('What the tool does, for the model.'),
    parameters: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe('JSON Schema of the arguments object.'),
    url: z
      .url({ protocol: /^https?$/ })
      .describe("Where the tool's calls are POSTed (http or https)."),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(300_000)
      .optional()
      .describe('How long a call may take before it fails (default 30 s).'),
    read_only: z
      .boolean()
      .default(false)
      .describe('Read-only tools may run in plan mode and are what permission mode `plan` allows.'),
  }),
)
export type HttpTool = z.infer<typeof HttpToolSchema>

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

/** A workspace-relative object path: plain segments, no `..`, outside the session store. */
export const EventLogPathSchema = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(512)
    .regex(
      /^[A-Za-z0-9_.][A-Za-z0-9._-]*(\/[A-Za-z0-9_.][A-Za-z0-9._-]*)*$/,
      'use "/"-separated segments of A-Z a-z 0-9 . _ - (relative, no empty segments)',
    )
    .refine((path) => !path.split('/').some((segment) => /^\.+$/.test(segment)), {
      message: 'must not contain "." or ".." segments',
    })
    .refine((path) => !/^\.vtcode\/sessions(\/|$)/i.test(path), {
      message: 'must not point into .vtcode/sessions/ (the canonical session store)',
    }),
)
/** Common test runners, at the start of the command or after `;`, `&&`, `|` or `(`. */
export const DEFAULT_TEST_COMMAND_PATTERN =
  '(^|[\\s;&|(])(npm( run)? test|npm t|pnpm( run)? test|yarn( run)? test|bun test|deno test|' +
  'npx (vitest|jest|mocha)|vitest|jest|mocha|pytest|python3? -m (pytest|unittest)|' +
  'cargo (test|nextest)|go test|mvn( \\S+)* test|\\./gradlew( \\S+)* test|gradle( \\S+)* test|' +
  'make (test|check)|ctest|rspec|phpunit|dotnet test|mix test)(\\s|$)'

function isRegExp(pattern: string): boolean {
  try {
    new RegExp(pattern)
    return true
  } catch {
    return false
  }
}

export const HarnessSchema = lazySchema(() =>
  z.strictObject({
    auto_compaction_enabled: z
      .boolean()
      .default(true)
      .describe('Compact the transcript automatically when it grows past the threshold.'),
    auto_compaction_threshold_tokens: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'Tokens at which automatic compaction starts; absent → derived from the context window.',
      ),
    max_context_tokens: z
      .number()
      .int()
      .positive()
      .default(160_000)
      .describe('The context budget the session plans with (default 160,000 tokens).'),
    context_reset_mode: z
      .enum(['off', 'on_stall', 'on_compaction'])
      .default('off')
      .describe(
        'When to reset the context with a handoff manifest: never, when progress stalls, or instead of compaction.',
      ),
    context_reset_stall_threshold: z
      .number()
      .int()
      .positive()
      .default(2)
      .describe('Turns without progress before an `on_stall` reset (default 2).'),
    compact_on_model_switch: z
      .boolean()
      .default(true)
      .describe(
        'A model or provider change compacts the history for the new model (trigger model_switch).',
      ),
    provider_compaction: z
      .boolean()
      .default(true)
      .describe(
        'Compaction through the provider (`responses.compact`, mode `provider`) for a model on the Responses API; off, or on the Chat API, compaction is a local summary.',
      ),
    max_tool_loops: z
      .number()
      .int()
      .positive()
      .max(1000)
      .default(50)
      .describe('Tool calls allowed within one turn before it stops (VT Code tool-loop limit).'),
    unified_exec: z
      .boolean()
      .describe(
        'offer unified_exec (run, write, poll, continue, wait, close) beside exec_command; default false',
      )
      .optional()
      .describe(
        "Offer `unified_exec` (VT Code's command-session dispatcher: run, write, poll, continue, wait, close) beside exec_command and write_stdin; needs a sandbox runner. The export and MCP settings have no zod defaults: absent means the documented default, so configurations stored before them re-serialize unchanged.",
      ),
    event_log_path: EventLogPathSchema.describe(
      'workspace-relative object that also gets the bare ThreadEvent JSONL after every turn (a path without extension is a folder)',
    )
      .optional()
      .describe(
        "VT Code's `agent.harness.event_log_path`: also write the bare ThreadEvent JSONL (as `vtcode exec --events`) to this object, relative to the workspace folder, rewritten at every turn end. A path without an extension is a folder that gets `harness-<session>-<YYYYMMDDTHHMMSSZ>.jsonl`. Never inside `.vtcode/sessions/`: the canonical store is not replaced, and the export may lag it (best effort).",
      ),
    open_responses_enabled: z
      .boolean()
      .describe('write derived/open-responses.jsonl when the thread completes; default true')
      .optional()
      .describe(
        'Write the Open Responses view `derived/open-responses.jsonl` when the thread completes.',
      ),
    atif_enabled: z
      .boolean()
      .describe(
        'write the ATIF v1.4 trajectory derived/atif-trajectory.json when the thread completes; default false',
      )
      .optional()
      .describe(
        'Write the ATIF v1.4 trajectory `derived/atif-trajectory.json` when the thread completes.',
      ),
    orientation_enabled: z
      .boolean()
      .default(true)
      .describe(
        'The orient phase: an `[Orientation Context]` system section from the workspace artifacts.',
      ),
    orientation_token_budget: z
      .number()
      .int()
      .min(200)
      .max(50_000)
      .default(2000)
      .describe('Estimated tokens (4 characters each) the orientation section may take.'),
    artifact_tools: z
      .boolean()
      .default(true)
      .describe("The model's artifact tools (notes, decisions, progress, harness documents)."),
    test_command: z
      .string()
      .min(1)
      .max(4000)
      .optional()
      .describe(
        "The exact command that runs the tests (a handoff's test results); else the pattern.",
      ),
    test_command_pattern: z
      .string()
      .min(1)
      .max(2000)
      .refine(isRegExp, 'must be a valid regular expression')
      .default(DEFAULT_TEST_COMMAND_PATTERN)
      .describe("A regular expression a test command matches (a handoff's test results)."),
    verification: z
      .enum(['off', 'required'])
      .default('off')
      .describe(
        "`required`: a turn's file changes must pass `POST …/verify` before the next turn.",
      ),
  }),
)
export type Harness = z.infer<typeof HarnessSchema>

/**
 * Tool permissions: `deny` wins over `allow`. Modes: `auto` (the default here: a service has no
 * one to ask unless the caller wants it) runs every tool not denied; `default` (VT Code's
 * interactive default) asks — the turn stops `awaiting_approval` — for tools not allowed;
 * `plan` allows read-only tools only. Pattern grammar: docs/permissions.md.
 */
export const PermissionsSchema = lazySchema(() =>
  z.strictObject({
    allow: z
      .array(z.string().min(1).max(200))
      .max(200)
      .default([])
      .describe('Tool names (or patterns) allowed without asking.'),
    deny: z
      .array(z.string().min(1).max(200))
      .max(200)
      .default([])
      .describe('Tool names (or patterns) never allowed.'),
    mode: z
      .enum(['default', 'plan', 'auto'])
      .default('auto')
      .describe(
        '`default` asks for unlisted tools, `plan` allows read-only tools only, `auto` allows everything not denied.',
      ),
  }),
)
export type Permissions = z.infer<typeof PermissionsSchema>

/** What the session's commands may do beyond their workspace (docs/configuration.md). */
export const SandboxSettingsSchema = lazySchema(() =>
  z.strictObject({
    network: z
      .boolean()
      .default(false)
      .describe(
        "Commands (and command hooks) get network access. Default false: a sandboxed command sees only its own loopback. The runner's TURNLINE_SANDBOX_NETWORK policy has the last word.",
      ),
  }),
)
export type SandboxSettings = z.infer<typeof SandboxSettingsSchema>

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
