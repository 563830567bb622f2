import { TurnlineError } from '../contract/errors.ts'
import { InputArtifactsSchema as IntentArtifactsSchema } from '../contract/turn-input-record.ts'
import type { BeginTurnRequest, EndTurnRequest, QueuedIntent } from './coordinator.ts'

/**
 * Input rules every Coordinator adapter enforces identically, so a bad argument fails the same
 * way (invalid_input) in memory and in Redis, before any I/O.
 */
const INTENT_ID = /^[A-Za-z0-9._:-]{1,128}$/

export function checkPositiveInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new TurnlineError('invalid_input', `${name} must be a positive integer`, {
      details: { [name]: value },
    })
  }
}

export function checkBatch(batch: number): void {
  if (!Number.isSafeInteger(batch) || batch < 0) {
    throw new TurnlineError('invalid_input', 'tip must be a non-negative integer', {
      details: { tip: batch },
    })
  }
}

export function checkIntent(intent: QueuedIntent): void {
  if (!INTENT_ID.test(intent.id)) {
    throw new TurnlineError(
      'invalid_input',
      'intent id must be 1-128 characters of [A-Za-z0-9._:-]',
      {
        details: { id: intent.id },
      },
    )
  }
  if (typeof intent.text !== 'string') {
    throw new TurnlineError('invalid_input', 'intent text must be a string')
  }
  if (
    intent.artifacts !== undefined &&
    !IntentArtifactsSchema.safeParse(intent.artifacts).success
  ) {
    throw new TurnlineError('invalid_input', 'intent artifacts must name 1-64 output artifacts')
  }
}

export function checkClaimKey(key: string): void {
  if (typeof key !== 'string' || key.length < 1 || key.length > 512) {
    throw new TurnlineError('invalid_input', 'a claim key must be 1-512 characters', {
      details: { length: typeof key === 'string' ? key.length : null },
    })
  }
}

export function checkBeginTurn(request: BeginTurnRequest): void {
  checkPositiveInteger('leaseMs', request.leaseMs)
}

export function checkEndTurn(request: EndTurnRequest): void {
  if (request.tip !== undefined) checkBatch(request.tip)
  const ttl = request.idempotency?.ttlSeconds
  if (ttl !== undefined) checkPositiveInteger('ttlSeconds', ttl)
}

/** A copy of the intent with only its fields (`artifacts` when it has some). */
export function copyIntent(intent: QueuedIntent): QueuedIntent {
  return {
    id: intent.id,
    text: intent.text,
    ...(intent.artifacts?.length ? { artifacts: intent.artifacts.map((a) => ({ ...a })) } : {}),
  }
}

const SCOPE = /^[A-Za-z0-9._:/-]{1,200}$/
/** A hold's id: what it stands for, then (since holders of one name hold apart) `#<holder>`. */
const HOLD_ID = /^[A-Za-z0-9._:/-]{1,200}(#[A-Za-z0-9_-]{1,64})?$/

/** The rules every PlaceBook adapter (place-holds.ts) enforces, before any I/O. */
export function checkPlaceHold(scope: string, id?: string, ttlMs?: number): void {
  if (!SCOPE.test(scope)) {
    throw new TurnlineError('invalid_input', 'a place scope is 1–200 of A-Z a-z 0-9 . _ : / -')
  }
  if (id !== undefined && !HOLD_ID.test(id)) {
    throw new TurnlineError(
      'invalid_input',
      'a place hold id is 1–200 of A-Z a-z 0-9 . _ : / -, then optionally # and 1–64 of A-Z a-z 0-9 _ -',
    )
  }
  if (ttlMs !== undefined && (!Number.isSafeInteger(ttlMs) || ttlMs <= 0)) {
    throw new TurnlineError('invalid_input', 'a place hold lives a positive number of ms')
  }
}
