import { isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'
import { commandFailure, unreachable } from '../shared/coordinator-failure.ts'

/**
 * Translates what ioredis throws into TurnlineErrors: refused credentials are not retryable,
 * script and type errors are our fault (internal), everything else (connection refused or lost,
 * the retry limit, a loading or busy server) is a retryable coordinator_unavailable. Messages
 * never carry command arguments (they may hold intent text or tokens).
 */
export function toRedisTcpError(
  error: unknown,
  operation: string,
  lastConnectionError?: string,
): TurnlineError {
  if (isTurnlineError(error)) return error
  const name = error instanceof Error ? error.name : ''
  const message = error instanceof Error ? error.message : String(error)
  const reason = message.split('\n')[0]?.trim() ?? ''

  if (name === 'ReplyError') {
    if (/^(NOAUTH|WRONGPASS|NOPERM)\b/.test(reason)) {
      return new TurnlineError(
        'coordinator_unavailable',
        `coordinator ${operation}: Redis refused the credentials or command (${reason}); check REDIS_URL`,
        { cause: error, retryable: false, details: { operation, reason: 'unauthorized' } },
      )
    }
    return commandFailure(error, operation, reason)
  }
  const why = lastConnectionError
    ? `${reason}; last connection error: ${lastConnectionError}`
    : reason
  return unreachable(error, operation, 'Redis', why || name || 'unknown error')
}
