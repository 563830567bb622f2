import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * The arguments of the sandbox's model-facing tools (exec_command, write_stdin, unified_exec,
 * read_file, write_file, apply_patch) as VT Code's tool schemas define them, and the stored form of a
 * command wait that outlives an invocation (engine state).
 */

const Tokens = lazySchema(() => z.number().int().min(1).max(50_000))

export const ExecCommandArgsSchema = lazySchema(() =>
  z.object({
    cmd: z.string().min(1, 'cmd must not be empty'),
    yield_time_ms: z.number().int().min(0).optional(),
    max_output_tokens: Tokens.optional(),
    workdir: z.string().optional(),
    tty: z.boolean().optional(),
    sandbox_permissions: z
      .enum(['use_default', 'with_additional_permissions', 'require_escalated', 'bypass_sandbox'])
      .optional(),
    additional_permissions: z
      .object({
        fs_read: z.array(z.string()).optional(),
        fs_write: z.array(z.string()).optional(),
      })
      .optional(),
    justification: z.string().optional(),
  }),
)
export type ExecCommandArgs = z.infer<typeof ExecCommandArgsSchema>

export const WriteStdinArgsSchema = lazySchema(() =>
  z
    .object({
      session_id: z.string().min(1),
      action: z.enum(['write', 'poll', 'wait']).optional(),
      chars: z.string().optional(),
      yield_time_ms: z.number().int().min(0).optional(),
      wait_timeout_seconds: z.number().int().min(1).optional(),
      timeout_seconds: z.number().int().min(1).optional(),
      max_output_tokens: Tokens.optional(),
    })
    .refine((args) => args.chars !== undefined || args.action === 'wait', {
      message: 'give chars (may be empty), or action "wait"',
    }),
)
export type WriteStdinArgs = z.infer<typeof WriteStdinArgsSchema>

export const ReadFileArgsSchema = lazySchema(() =>
  z.object({
    path: z.string().min(1),
    offset: z.number().int().min(1).optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
  }),
)
export const WriteFileArgsSchema = lazySchema(() =>
  z.object({ path: z.string().min(1), content: z.string() }),
)
export const ApplyPatchArgsSchema = lazySchema(() => z.object({ input: z.string().min(1) }))

/** `unified_exec` (VT Code's command-session dispatcher as one tool). */
export const UNIFIED_EXEC_ACTIONS = ['run', 'write', 'poll', 'continue', 'wait', 'close'] as const
export type UnifiedExecAction = (typeof UNIFIED_EXEC_ACTIONS)[number]

export const UnifiedExecArgsSchema = lazySchema(() =>
  z.object({
    action: z.enum(UNIFIED_EXEC_ACTIONS).optional(),
    cmd: z.string().optional(),
    command: z.string().optional(),
    session_id: z.string().min(1).optional(),
    chars: z.string().optional(),
    input: z.string().optional(),
    yield_time_ms: z.number().int().min(0).optional(),
    wait_timeout_seconds: z.number().int().min(1).optional(),
    timeout_seconds: z.number().int().min(1).optional(),
    max_output_tokens: Tokens.optional(),
    workdir: z.string().optional(),
    tty: z.boolean().optional(),
  }),
)
export type UnifiedExecArgs = z.infer<typeof UnifiedExecArgsSchema>

/** A wait that outlasts the invocation: store it, end the turn `waiting`, resume later. */
export const PendingWaitSchema = lazySchema(() =>
  z.object({
    exec_session_id: z.string(),
    /** Epoch ms at which the wait ends (the command keeps running). */
    deadline: z.number(),
    started_at: z.number(),
    /** The deadline the model asked for, after the ceiling. */
    requested_seconds: z.number(),
    /** Output offset the wait's capture starts from. */
    since: z.number().int().min(0),
    max_output_tokens: z.number().int().min(1),
  }),
)
export type PendingWait = z.infer<typeof PendingWaitSchema>
