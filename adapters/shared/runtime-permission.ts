import { TurnlineError } from '../../src/contract/errors.ts'

/**
 * A runtime's refusal of a permission, told apart from a fault of the service called. Deno
 * refuses what its flags do not grant with `NotCapable` (Deno 2; `PermissionDenied` before), and
 * Node's permission model with `ERR_ACCESS_DENIED`; the message names what was refused and the
 * flag that grants it (`Requires net access to "…", run again with the --allow-net flag`). No
 * retry changes the answer, so an adapter reports it as a configuration fault, never as an
 * outage worth retrying.
 */

const REFUSALS = new Set(['NotCapable', 'PermissionDenied'])

/** The runtime's message when `error` (or an error it wraps) is a permission refusal. */
export function permissionRefusal(error: unknown): string | undefined {
  let current = error
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const record = current as { name?: unknown; code?: unknown; message?: unknown; cause?: unknown }
    const refused =
      (typeof record.name === 'string' && REFUSALS.has(record.name)) ||
      record.code === 'ERR_ACCESS_DENIED'
    if (refused) return typeof record.message === 'string' ? record.message : String(record.name)
    current = record.cause
  }
  return undefined
}

/**
 * The adapter error for a permission refusal (undefined when `error` is none): not retryable, its
 * reason `permission`, the runtime's words (which name paths and hosts) in the log only. The
 * entries meet it first at startup (functions/entries/startup-probe.ts), where it stops the
 * start with those words.
 */
export function refusedByRuntime(
  code: 'storage_unavailable' | 'coordinator_unavailable',
  what: string,
  error: unknown,
): TurnlineError | undefined {
  const refusal = permissionRefusal(error)
  if (refusal === undefined) return undefined
  return new TurnlineError(
    code,
    `${what}: the runtime refused a permission this deployment needs; the server's log names it`,
    { cause: error, retryable: false, details: { reason: 'permission' }, logDetails: { refusal } },
  )
}
