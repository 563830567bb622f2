import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { ExecSessionId, Offset, REQUEST_ID, Segment } from './runner-fields.ts'

/**
 * The exit callback of the sandbox runner protocol (`docs/runner-protocol.md`): the signed
 * notice the runner POSTs back when a command exits (read by `runner-callback.ts`).
 */

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
