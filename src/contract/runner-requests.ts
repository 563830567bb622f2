import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import {
  CaptureBytes,
  ExecSessionId,
  MAX_TRANSFER_BYTES,
  MAX_YIELD_MS,
  Offset,
  REQUEST_ID,
  Scoped,
  WAIT_CEILING_MS,
} from './runner-fields.ts'

/**
 * The request bodies of the sandbox runner protocol (`docs/runner-protocol.md`): what the HTTP
 * client (`adapters/sandbox-http`) sends and the reference runner (`adapters/runner`) reads, each
 * signed and scoped (`runner-fields.ts`).
 */

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
    private_output: z
      .boolean()
      .optional()
      .describe(
        "Keep the command's output spool in the runner's own folder, out of every command's reach, instead of the workspace: what the runner answers is then what the command printed, whatever the session's other commands do (a command hook's answer). Absent = no; clients send it only when true.",
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
