import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { ExecSessionId, Offset, Scoped } from './runner-fields.ts'

/**
 * The answers of the sandbox runner protocol (`docs/runner-protocol.md`): what the reference
 * runner (`adapters/runner`) answers to each request of `runner-requests.ts` and the HTTP client
 * (`adapters/sandbox-http`) reads, its signed sandbox status, and the refusals it answers with.
 */

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
      path: z
        .string()
        .describe(
          "Relative to the workspace; for a command started with `private_output`, the file's name in the runner's own folder, which no command reaches.",
        ),
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
