import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * A session's harness settings (`harness` of `POST /v1/sessions`): compaction and context
 * resets, the tools offered, the exports written as the thread goes, the orient phase, how test
 * commands are told and whether a turn's changes must be verified.
 */

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
      .describe(
        "Rounds of tool calls (a model answer's calls, however many) one turn may run; the model request after the last one fails the turn (VT Code's tool-loop limit).",
      ),
    // max_tool_calls, unified_exec, the export settings and the MCP settings have no zod
    // defaults: absent means the documented default, so configurations stored before them
    // re-serialize unchanged.
    max_tool_calls: z
      .number()
      .int()
      .positive()
      .max(1000)
      .optional()
      .describe(
        "Server-run tool calls one turn may run (`max_tool_calls` of `POST /v1/responses`); once that many have run, the model is offered no more of them (`tool_choice: none` when the session has no client function), a call it still makes is not run (its result says why), and the turn goes on to the model's answer. Client functions are not counted. Absent: no such limit.",
      ),
    unified_exec: z
      .boolean()
      .optional()
      .describe(
        "Offer `unified_exec` (VT Code's command-session dispatcher: run, write, poll, continue, wait, close) beside exec_command and write_stdin; needs a sandbox runner. Default false.",
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
      .optional()
      .describe(
        'Write the Open Responses view `derived/open-responses.jsonl` when the thread completes. Default true.',
      ),
    atif_enabled: z
      .boolean()
      .optional()
      .describe(
        'Write the ATIF v1.4 trajectory `derived/atif-trajectory.json` when the thread completes. Default false.',
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
      // A request's pattern must also suit the linear-time engine it is matched on
      // (session-config.ts `readSessionConfig`); a stored one need only be a regular expression.
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
