import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * Wire bodies of the sandbox runner protocol (`docs/runner-protocol.md`): what the HTTP client
 * (`adapters/sandbox-http`) sends, what the reference runner (`adapters/runner`) answers, and the
 * exit callback the runner POSTs back. Every request is signed (see `src/contract/runner-signature.ts`)
 * and carries a random `nonce`, so two identical requests never share a signature.
 */

/** Tenant and session ids as the API accepts them; they name the runner's workspace folder. */
const Segment = lazySchema(() =>
  z
    .string()
    .regex(/^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/, 'use 1–128 characters from A-Z a-z 0-9 . _ -')
    .refine((value) => !value.includes('..'), 'must not contain ".."'),
)

export const EXEC_SESSION_ID = /^run-[a-z0-9]{8,64}$/
export const REQUEST_ID = /^[A-Za-z0-9_-]{8,128}$/

/** Ceiling of a single wait (VT Code's `long_running_command_ceiling_seconds`). */
export const WAIT_CEILING_MS = 3_600_000
/** Longest yield of start, write and poll. */
export const MAX_YIELD_MS = 30_000
/** Bytes of head and of tail a capture returns at most. */
export const MAX_CAPTURE_BYTES = 64 * 1024
/** Largest spool range or file content one request moves. */
export const MAX_TRANSFER_BYTES = 1024 * 1024

const ExecSessionId = lazySchema(() =>
  z.string().regex(EXEC_SESSION_ID, 'an exec session id starts with "run-"'),
)
const CaptureBytes = lazySchema(() => z.number().int().min(64).max(MAX_CAPTURE_BYTES))
const Offset = lazySchema(() => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER))

const Scoped = {
  tenant: Segment,
  session_id: Segment,
  nonce: z.string().min(16).max(128),
}

export const ExecStartBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    request_id: z.string().regex(REQUEST_ID),
    tool_call_id: z.string().min(1).max(256),
    cmd: z
      .string()
      .min(1)
      .max(64 * 1024),
    workdir: z
      .string()
      .min(1)
      .max(4096)
      .optional()
      .describe('Relative to the session workspace; absent = the workspace itself.'),
    tty: z.boolean().default(false),
    yield_time_ms: z.number().int().min(0).max(MAX_YIELD_MS),
    max_output_bytes: CaptureBytes,
    network: z
      .boolean()
      .optional()
      .describe(
        "The session allows this command network access. Absent = no (clients send it only when true, so runners that predate it keep working). The runner's policy decides in the end.",
      ),
  }),
)
export type ExecStartBody = z.infer<typeof ExecStartBodySchema>

export const ExecWriteBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    exec_session_id: ExecSessionId,
    chars: z.string().max(MAX_TRANSFER_BYTES),
    yield_time_ms: z.number().int().min(0).max(MAX_YIELD_MS),
    max_output_bytes: CaptureBytes,
  }),
)
export type ExecWriteBody = z.infer<typeof ExecWriteBodySchema>

export const ExecPollBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    exec_session_id: ExecSessionId,
    yield_time_ms: z.number().int().min(0).max(MAX_YIELD_MS),
    max_output_bytes: CaptureBytes,
    since: Offset.optional().describe(
      "Capture from this output offset instead of the runner's read cursor.",
    ),
  }),
)
export type ExecPollBody = z.infer<typeof ExecPollBodySchema>

export const ExecWaitBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    exec_session_id: ExecSessionId,
    timeout_ms: z
      .number()
      .int()
      .min(0)
      .max(WAIT_CEILING_MS)
      .describe('How long to block for the exit; the deadline never kills the command.'),
    max_output_bytes: CaptureBytes,
    since: Offset.optional(),
  }),
)
export type ExecWaitBody = z.infer<typeof ExecWaitBodySchema>

export const ExecCloseBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    exec_session_id: ExecSessionId,
    max_output_bytes: CaptureBytes.default(4096),
  }),
)
export type ExecCloseBody = z.infer<typeof ExecCloseBodySchema>

export const SpoolReadBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    exec_session_id: ExecSessionId,
    offset: Offset,
    length: z.number().int().min(1).max(MAX_TRANSFER_BYTES),
  }),
)
export type SpoolReadBody = z.infer<typeof SpoolReadBodySchema>

const WorkspacePath = lazySchema(() => z.string().min(1).max(4096))

export const FileReadBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    path: WorkspacePath,
    start_line: z.number().int().min(1).default(1).describe('1-based first line.'),
    max_lines: z.number().int().min(1).max(100_000).default(2000),
    max_bytes: z
      .number()
      .int()
      .min(1)
      .max(MAX_TRANSFER_BYTES)
      .default(256 * 1024),
  }),
)
export type FileReadBody = z.infer<typeof FileReadBodySchema>

export const FileWriteBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    path: WorkspacePath,
    content: z.string().max(MAX_TRANSFER_BYTES),
  }),
)
export type FileWriteBody = z.infer<typeof FileWriteBodySchema>

export const ApplyPatchBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    patch: z.string().min(1).max(MAX_TRANSFER_BYTES),
  }),
)
export type ApplyPatchBody = z.infer<typeof ApplyPatchBodySchema>

export const WorktreeBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 characters from A-Z a-z 0-9 _ -'),
    ref: z
      .string()
      .regex(/^[A-Za-z0-9_./-]{1,200}$/)
      .refine((value) => !value.startsWith('-'), 'must not start with "-"')
      .optional()
      .describe('Commit-ish the worktree starts from; absent = HEAD.'),
  }),
)
export type WorktreeBody = z.infer<typeof WorktreeBodySchema>

export const GitLogBodySchema = lazySchema(() =>
  z.strictObject({
    ...Scoped,
    count: z.int().min(1).max(50).describe('How many commits (`git log --oneline -<count>`).'),
  }),
)
export type GitLogBody = z.infer<typeof GitLogBodySchema>

/** `POST /v1/workspace/erase`: the scope alone (its workspace goes, docs/runner-protocol.md). */
export const WorkspaceEraseBodySchema = lazySchema(() => z.strictObject({ ...Scoped }))
export type WorkspaceEraseBody = z.infer<typeof WorkspaceEraseBodySchema>

/**
 * `POST /v1/sandbox/status`: how the runner isolates commands now, in an answer signed with the
 * runner secret that echoes this nonce (docs/runner-protocol.md, "Sandbox status").
 */
export const SandboxStatusBodySchema = lazySchema(() => z.strictObject({ nonce: Scoped.nonce }))
export type SandboxStatusBody = z.infer<typeof SandboxStatusBodySchema>

// --- responses -------------------------------------------------------------------------------------

export const ExecCaptureSchema = lazySchema(() =>
  z.object({
    exec_session_id: ExecSessionId,
    request_id: z.string(),
    tool_call_id: z.string(),
    command: z.string(),
    workdir: z.string().describe('Relative to the workspace; "." for the workspace itself.'),
    backend: z.enum(['pipe', 'pty']),
    state: z
      .enum(['running', 'exited', 'lost'])
      .describe('`lost`: the runner restarted while the command ran; its exit is unknown.'),
    exit_code: z.number().int().optional(),
    pid: z.number().int().optional(),
    attached: z
      .boolean()
      .describe('True when a start re-attached to the command its request id already started.'),
    output: z.object({
      from: Offset.describe('Output offsets of this capture: [from, to).'),
      to: Offset,
      head: z.string().describe('The first bytes of the range (all of it when it fits).'),
      tail: z.string().describe('The last bytes of the range when it did not fit in `head`.'),
      omitted_bytes: Offset,
    }),
    total_output_bytes: Offset,
    spool: z.object({
      path: z.string().describe('Relative to the workspace.'),
      complete: z.boolean().describe('Every byte of output is in the file and the file is closed.'),
    }),
    wall_time_ms: z.number().int().min(0),
    waited_ms: z.number().int().min(0).optional(),
    timed_out: z.boolean().optional(),
  }),
)
export type ExecCapture = z.infer<typeof ExecCaptureSchema>

export const SpoolChunkSchema = lazySchema(() =>
  z.object({
    offset: Offset,
    data_base64: z.string(),
    total_output_bytes: Offset,
    complete: z.boolean(),
    eof: z.boolean(),
  }),
)
export type SpoolChunkBody = z.infer<typeof SpoolChunkSchema>

export const FileReadResultSchema = lazySchema(() =>
  z.object({
    path: z.string(),
    content: z.string(),
    size: Offset,
    start_line: z.number().int().min(1),
    end_line: z.number().int().min(0),
    total_lines: z.number().int().min(0),
    truncated: z.boolean(),
  }),
)
export type FileReadResult = z.infer<typeof FileReadResultSchema>

export const FileWriteResultSchema = lazySchema(() =>
  z.object({
    path: z.string(),
    kind: z.enum(['add', 'update']),
    bytes: Offset,
  }),
)
export type FileWriteResult = z.infer<typeof FileWriteResultSchema>

export const PatchResultSchema = lazySchema(() =>
  z.object({
    changes: z.array(z.object({ path: z.string(), kind: z.enum(['add', 'delete', 'update']) })),
  }),
)
export type PatchResult = z.infer<typeof PatchResultSchema>

export const WorktreeResultSchema = lazySchema(() =>
  z.object({
    path: z.string(),
    branch: z.string(),
    created: z.boolean(),
  }),
)
export type WorktreeResult = z.infer<typeof WorktreeResultSchema>

/**
 * The workspace's recent commits read without a process: 'log' (what
 * `git log --oneline -<count> --no-decorate` prints), 'none' (no repository, or no commit yet),
 * 'unknown' (only git can tell: run it).
 */
export const GitLogResultSchema = lazySchema(() =>
  z.discriminatedUnion('state', [
    z.object({ state: z.literal('log'), log: z.string() }),
    z.object({ state: z.literal('none') }),
    z.object({ state: z.literal('unknown'), reason: z.string() }),
  ]),
)
export type GitLogResult = z.infer<typeof GitLogResultSchema>

/**
 * What erasing a workspace found: 'erased' (it, or what a cut-short erase left, is gone),
 * 'absent' (nothing was there: erased before, or never made), 'kept' (the runner never erases
 * this workspace, e.g. project mode's user folder; `reason` says why).
 */
export const WorkspaceEraseResultSchema = lazySchema(() =>
  z.discriminatedUnion('state', [
    z.object({ state: z.literal('erased') }),
    z.object({ state: z.literal('absent') }),
    z.object({ state: z.literal('kept'), reason: z.string() }),
  ]),
)
export type WorkspaceEraseResult = z.infer<typeof WorkspaceEraseResultSchema>

/**
 * The signed answer to `POST /v1/sandbox/status`. `type` keeps it from passing for a request (or
 * a request for it); `nonce` is the request's, so an old answer cannot be played back.
 */
export const SandboxStatusAnswerSchema = lazySchema(() =>
  z.object({
    type: z.literal('sandbox.status'),
    nonce: Scoped.nonce,
    sandbox: z.discriminatedUnion('isolation', [
      z.object({ isolation: z.literal('bwrap'), version: z.string() }),
      z.object({ isolation: z.literal('none'), reason: z.string() }),
    ]),
  }),
)
export type SandboxStatusAnswer = z.infer<typeof SandboxStatusAnswerSchema>

/** Refusals a runner answers with a 4xx; the client turns them into typed results. */
export const REFUSAL_CODES = [
  'invalid_input',
  'path_escape',
  'not_found',
  'conflict',
  'patch_failed',
  'payload_too_large',
] as const
export type RefusalCode = (typeof REFUSAL_CODES)[number]

export const RunnerErrorBodySchema = lazySchema(() =>
  z.object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
)
export type RunnerErrorBody = z.infer<typeof RunnerErrorBodySchema>

// --- the exit callback ------------------------------------------------------------------------------

export const ExecExitCallbackSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('exec.exited').describe('Always `exec.exited`.'),
    nonce: z.string().min(16).max(128).describe('Random per notice, so every body differs.'),
    tenant: Segment.describe('The tenant of the session.'),
    session_id: Segment.describe('The session whose command exited.'),
    exec_session_id: ExecSessionId.describe("The command's exec session (`run-…`)."),
    request_id: z
      .string()
      .regex(REQUEST_ID)
      .describe('The runner request that started the command.'),
    tool_call_id: z.string().min(1).max(256).describe("The model's call id of the command."),
    exit_code: z
      .number()
      .int()
      .describe("The shell's exit status; 128 + n when signal n ended it."),
    total_output_bytes: Offset.describe('Bytes of output the command wrote.'),
    spool_path: z.string().describe('Where its output is spooled, relative to the workspace.'),
    spool_complete: z.boolean().describe('Whether the spool holds all of the output.'),
    exited_at: z.number().int().min(0).describe('Epoch milliseconds.'),
    attempt: z.number().int().min(1).describe('1 on the first delivery, counting up on retries.'),
  }),
)
export type ExecExitCallback = z.infer<typeof ExecExitCallbackSchema>
