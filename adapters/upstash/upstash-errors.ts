import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import { commandFailure, unreachable } from '../shared/coordinator-failure.ts'
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
    return commandFailure(error, operation, reason)
  }
  return unreachable(error, operation, 'Upstash', reason || name || 'unknown error')
}
