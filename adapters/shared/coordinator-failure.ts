import { TurnlineError } from '../../src/contract/errors.ts'

/**
 * What the coordinator's Redis answered or failed with, as a TurnlineError, the same over every
 * transport (redis-tcp-errors.ts, upstash-errors.ts). `reason` is the server's first line, never
 * the command's arguments (they may hold intent text or tokens).
 */

/**
 * A command Redis refused: a script or type error is a fault of ours or of the data, not of
 * availability (internal); any other refusal is a retryable coordinator_unavailable.
 */
export function commandFailure(error: unknown, operation: string, reason: string): TurnlineError {
  if (/WRONGTYPE|user_script|Error compiling script|Error running script/i.test(reason)) {
    return new TurnlineError('internal', `coordinator ${operation} failed: ${reason}`, {
      cause: error,
      details: { operation, reason: 'command_error' },
    })
  }
  return new TurnlineError(
    'coordinator_unavailable',
    `coordinator ${operation} failed: ${reason}`,
    {
      cause: error,
      retryable: true,
      details: { operation, reason: 'command_error' },
    },
  )
}

/**
 * `server` (Redis, Upstash) did not answer: retryable, after a second. `why` is the transport's
 * own text (`connect ECONNREFUSED 10.0.4.12:6379`, `getaddrinfo ENOTFOUND redis.internal`,
 * a runtime's `error sending request for url (…)`): it names the deployment's hosts and ports,
 * so it is for the server log (`logDetails`), never the message a client is answered with.
 */
export function unreachable(
  error: unknown,
  operation: string,
  server: string,
  why: string,
): TurnlineError {
  return new TurnlineError(
    'coordinator_unavailable',
    `coordinator ${operation}: ${server} is unreachable`,
    {
      cause: error,
      retryable: true,
      retryAfter: 1,
      details: { operation, reason: 'transport' },
      logDetails: { transport: why },
    },
  )
}
