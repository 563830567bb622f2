import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * What every body of the sandbox runner protocol (`docs/runner-protocol.md`) is made of: the
 * scope a request names (tenant, session and a random `nonce`, so two identical requests never
 * share a signature: `src/contract/runner-signature.ts`), exec session and request ids, output
 * offsets, and the protocol's limits. The requests are in `runner-requests.ts`, the runner's
 * answers in `runner-answers.ts`, the exit callback in `exec-exit-callback.ts`.
 */

/** Tenant and session ids as the API accepts them; they name the runner's workspace folder. */
export const Segment = lazySchema(() =>
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

export const ExecSessionId = lazySchema(() =>
  z.string().regex(EXEC_SESSION_ID, 'an exec session id starts with "run-"'),
)
export const CaptureBytes = lazySchema(() => z.number().int().min(64).max(MAX_CAPTURE_BYTES))
export const Offset = lazySchema(() => z.number().int().min(0).max(Number.MAX_SAFE_INTEGER))

/** The scope every request but the sandbox status names: whose workspace, and a nonce. */
export const Scoped = {
  tenant: Segment,
  session_id: Segment,
  nonce: z.string().min(16).max(128),
}
