import { StoredIdempotencyRecordSchema } from '../../src/contract/coordinator-record.ts'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { IdempotencyRecord, QueuedIntent } from '../../src/ports/coordinator.ts'
import * as scripts from './coordinator-redis-scripts.ts'

/** Reading the replies of the Redis coordinators' scripts: anything unexpected is corrupt_data. */

export function pickRecord(record: IdempotencyRecord): IdempotencyRecord {
  const { sessionId, turnId, batch, response } = record
  return { sessionId, turnId, batch, response }
}

/** The record as stored; tolerates a client with automatic deserialization (already parsed). */
export function parseRecord(value: unknown): IdempotencyRecord {
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      throw corrupt('beginTurn', value)
    }
  }
  const result = StoredIdempotencyRecordSchema.safeParse(parsed)
  if (!result.success) throw corrupt('beginTurn', value)
  const { v: _version, ...record } = result.data
  return record
}

export function parseTip(value: unknown): number | null {
  if (value === null || value === undefined) return null
  const tip = typeof value === 'string' ? Number(value) : value
  if (typeof tip !== 'number' || !Number.isSafeInteger(tip) || tip < 0) {
    throw corrupt('tip', value)
  }
  return tip
}

export function asArray(value: unknown, operation: string): unknown[] {
  if (!Array.isArray(value)) throw corrupt(operation, value)
  return value
}

export function asInteger(value: unknown, operation: string): number {
  const number = typeof value === 'string' ? Number(value) : value
  if (typeof number !== 'number' || !Number.isInteger(number)) throw corrupt(operation, value)
  return number
}

export function corrupt(operation: string, value: unknown): TurnlineError {
  const shown = JSON.stringify(value) ?? String(value)
  return new TurnlineError('corrupt_data', `coordinator ${operation}: unexpected reply`, {
    details: { operation, reply: shown.slice(0, 200) },
  })
}

export function decodeIntents(reply: unknown, what: string): QueuedIntent[] {
  return asArray(reply, what).map((entry) => {
    const intent = typeof entry === 'string' ? scripts.decodeIntentEntry(entry) : null
    if (intent === null) throw corrupt(what, entry)
    return intent
  })
}
