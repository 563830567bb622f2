import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import { refusedByRuntime } from '../shared/runtime-permission.ts'
import { UpstashReplyError } from './upstash-rest.ts'

/**
 * Translates what the REST client (`UpstashRest`) or an `@upstash/redis` client throws into
 * TurnlineErrors. Messages never carry the command body (`@upstash/redis` appends it, and it may
 * hold intent text or tokens).
 */
export function toCoordinatorError(error: unknown, operation: string): TurnlineError {
  if (isTurnlineError(error)) return error
  const refused = refusedByRuntime('coordinator_unavailable', `coordinator ${operation}`, error)
  if (refused) return refused
  const raw = error instanceof Error ? error.message : String(error)
  const name = error instanceof Error ? error.name : ''
  const reason = raw.replace(/,? command was: [\s\S]*$/, '').trim()
  const replied = error instanceof UpstashReplyError ? error.reason : undefined

  if (replied === 'unauthorized' || (name === 'UpstashError' && /^Unauthorized\b/i.test(reason))) {
    return new TurnlineError(
      'coordinator_unavailable',
      `coordinator ${operation}: Upstash rejected the REST token (401 Unauthorized); check the coordinator URL and token`,
      { cause: error, retryable: false, details: { operation, reason: 'unauthorized' } },
    )
  }
  if (replied === 'bad_response' || name === 'UpstashJSONParseError') {
    return new TurnlineError(
      'coordinator_unavailable',
      `coordinator ${operation}: the Upstash endpoint answered something other than JSON`,
      { cause: error, retryable: true, details: { operation, reason: 'bad_response' } },
    )
  }
  if (replied === 'command_error' || name === 'UpstashError') {
    // A script or type error is a fault of ours or of the data, not of availability.
    if (/WRONGTYPE|user_script|Error compiling script|Error running script/i.test(reason)) {
      return new TurnlineError('internal', `coordinator ${operation} failed: ${reason}`, {
        cause: error,
        details: { operation, reason: 'command_error' },
      })
    }
    return new TurnlineError(
      'coordinator_unavailable',
      `coordinator ${operation} failed: ${reason}`,
      { cause: error, retryable: true, details: { operation, reason: 'command_error' } },
    )
  }
  return new TurnlineError(
    'coordinator_unavailable',
    `coordinator ${operation}: Upstash is unreachable (${reason || name || 'unknown error'})`,
    { cause: error, retryable: true, retryAfter: 1, details: { operation, reason: 'transport' } },
  )
}
