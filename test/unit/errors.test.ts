import { describe, expect, it } from 'vitest'
import { ERROR_CODES, isTurnlineError, TurnlineError } from '../../src/contract/errors.ts'

describe('TurnlineError', () => {
  it('carries its code, message, details and cause', () => {
    const cause = new Error('socket closed')
    const error = new TurnlineError('storage_unavailable', 'bucket unreachable', {
      details: { bucket: 'turnline' },
      cause,
    })
    expect(error).toBeInstanceOf(Error)
    expect(error.name).toBe('TurnlineError')
    expect(error.code).toBe('storage_unavailable')
    expect(error.message).toBe('bucket unreachable')
    expect(error.details).toEqual({ bucket: 'turnline' })
    expect(error.cause).toBe(cause)
    expect(error.retryAfter).toBeUndefined()
  })

  it('is retryable by default only for transient codes', () => {
    const retryable = ERROR_CODES.filter((code) => new TurnlineError(code, 'x').retryable)
    expect(retryable.sort()).toEqual(
      [
        'conflict',
        'coordinator_unavailable',
        'runner_unavailable',
        'session_busy',
        'storage_unavailable',
      ].sort(),
    )
  })

  it('lets the caller override retryable and set retryAfter', () => {
    const error = new TurnlineError('model_error', 'rate limited', {
      retryable: true,
      retryAfter: 7,
    })
    expect(error.retryable).toBe(true)
    expect(error.retryAfter).toBe(7)
    expect(new TurnlineError('conflict', 'lost the race', { retryable: false }).retryable).toBe(
      false,
    )
  })

  it('has no cause property when none is given', () => {
    expect('cause' in new TurnlineError('internal', 'boom')).toBe(false)
  })
})

describe('isTurnlineError', () => {
  const notFound = new TurnlineError('not_found', 'no such session')

  it('recognises a TurnlineError with or without a code filter', () => {
    expect(isTurnlineError(notFound)).toBe(true)
    expect(isTurnlineError(notFound, 'not_found')).toBe(true)
    expect(isTurnlineError(notFound, 'conflict', 'not_found')).toBe(true)
    expect(isTurnlineError(notFound, 'conflict')).toBe(false)
  })

  it('rejects plain errors and non-errors', () => {
    expect(isTurnlineError(new Error('not_found'))).toBe(false)
    expect(isTurnlineError({ name: 'TurnlineError', code: 'not_found' })).toBe(false)
    expect(isTurnlineError(undefined)).toBe(false)
    expect(isTurnlineError('TurnlineError')).toBe(false)
  })

  it('recognises an error from another copy of the module by its name and code', () => {
    const foreign = Object.assign(new Error('busy'), {
      name: 'TurnlineError',
      code: 'session_busy',
    })
    expect(isTurnlineError(foreign, 'session_busy')).toBe(true)
    expect(isTurnlineError(foreign, 'conflict')).toBe(false)
  })
})
