import type * as z from 'zod'
import { TurnResponseSchema } from '../src/contract/wire-responses.ts'
import { abortableSleep } from '../src/shared/abortable-sleep.ts'
import { apiErrorOf, TurnlineApiError, TurnlineConnectionError } from './errors.ts'
import { eventOf, framesOf, seqOf } from './event-feed.ts'
import { isTransient, type RetryOptions, reconnectDelayMs, retryPolicy } from './retry.ts'
import { parseJson, readText, type Transport } from './transport.ts'
import { type SeqEvent, type TurnResponse, turnEvents } from './types.ts'

export interface TurnCall {
  path: string
  body: unknown
  /** With a key the call is resumable: a dropped stream is re-sent with the same key. */
  idempotencyKey?: string | undefined
  signal?: AbortSignal | undefined
  retry?: RetryOptions | undefined
}

/**
 * A turn streamed as it runs: iterate it for the events (each once, in seq order), then
 * `result()` for the TurnResponse. A turn with an Idempotency-Key survives a dropped connection:
 * the request is sent again with the same key, which never runs the turn twice — the server
 * answers `session_busy` while the first request still runs (the stream waits), then replays its
 * answer — and the events already delivered are skipped.
 */
export class TurnStream implements AsyncIterable<SeqEvent> {
  private readonly frames: AsyncGenerator<SeqEvent, TurnResponse, undefined>
  private outcome: TurnResponse | undefined
  private iterating = false

  constructor(
    transport: Transport,
    private readonly call: TurnCall,
  ) {
    this.frames = streamTurnEvents(transport, call)
  }

  /** The key the turn is sent with (generated when the caller gave none). */
  get idempotencyKey(): string | undefined {
    return this.call.idempotencyKey
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SeqEvent, void, undefined> {
    if (this.iterating) throw new TypeError('a TurnStream can be iterated once')
    this.iterating = true
    let done = false
    try {
      for (;;) {
        const next = await this.frames.next()
        if (next.done) {
          this.outcome = next.value
          done = true
          return
        }
        yield next.value
      }
    } finally {
      if (!done) await this.frames.return(undefined as never).catch(() => {})
    }
  }

  /** The turn's answer; reads (and drops) whatever events were not iterated yet. */
  async result(): Promise<TurnResponse> {
    if (this.outcome) return this.outcome
    if (!this.iterating) {
      for await (const _ of this) {
        // the events are in the answer too
      }
    }
    if (!this.outcome) throw new TypeError('the TurnStream was closed before its result')
    return this.outcome
  }
}

async function* streamTurnEvents(
  transport: Transport,
  call: TurnCall,
): AsyncGenerator<SeqEvent, TurnResponse, undefined> {
  const policy = retryPolicy(call.retry)
  const key = call.idempotencyKey
  let last = -1
  let failures = 0
  let resuming = false
  let busySince: number | undefined
  for (;;) {
    try {
      const response = await transport.send('POST', call.path, {
        body: call.body,
        headers: { accept: 'text/event-stream', 'idempotency-key': key },
        signal: call.signal,
        idempotencyKey: key,
        headTimeoutMs: policy.idleTimeoutMs,
      })
      busySince = undefined
      const type = response.headers.get('content-type') ?? ''
      if (!type.startsWith('text/event-stream') || !response.body) {
        const answer = parseJson(
          TurnResponseSchema,
          await readText(response, transport.maxAnswerBytes, call),
          200,
        )
        for (const item of turnEvents(answer)) if (item.seq > last) yield item
        return answer
      }
      for await (const frame of framesOf(response.body, call.signal, policy.idleTimeoutMs)) {
        if (frame.event === 'turn.result') {
          const answer = parseJson(TurnResponseSchema, frame.data, 200)
          // Events a replay or a resumed request did not send live come with the answer.
          for (const item of turnEvents(answer)) {
            if (item.seq > last) {
              last = item.seq
              yield item
            }
          }
          return answer
        }
        if (frame.event === 'error') {
          throw apiErrorOf(undefined, frame.data, { inStream: true, idempotencyKey: key })
        }
        if (frame.id === undefined) continue
        const seq = seqOf(frame.id)
        if (seq <= last) continue
        const event = eventOf(frame.data)
        last = seq
        failures = 0
        yield { seq, id: frame.id, event }
      }
      throw new TurnlineConnectionError('the turn stream ended without its result', key)
    } catch (error) {
      call.signal?.throwIfAborted()
      // A turn that failed after it started streaming (`event: error`, e.g. a lost commit
      // race: its live events were provisional) is reported, never sent again.
      if (key === undefined || (error instanceof TurnlineApiError && error.inStream)) throw error
      // Our own first request still runs on the server: wait for it to finish.
      if (resuming && error instanceof TurnlineApiError && error.code === 'session_busy') {
        busySince ??= Date.now()
        if (Date.now() - busySince > policy.busyTimeoutMs) throw error
        // Asked again within 2 s whatever Retry-After says: it is our own turn that holds it.
        await abortableSleep(Math.min((error.retryAfterSeconds ?? 1) * 1000, 2000), call.signal)
        continue
      }
      failures += 1
      if (!isTransient(error) || failures > policy.maxAttempts) throw withKey(error, key)
      resuming = true
      await abortableSleep(reconnectDelayMs(policy, failures, error), call.signal)
    }
  }
}

function withKey(error: unknown, key: string): unknown {
  if (error instanceof TurnlineConnectionError && error.idempotencyKey === undefined) {
    return new TurnlineConnectionError(error.message, key, { cause: error.cause })
  }
  return error
}

/**
 * A key for a call that takes one when the caller gave none: 128 random bits. From
 * `getRandomValues`, not `randomUUID`, which browsers offer only in secure contexts (a page
 * served over plain http from a name other than localhost has none).
 */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40 // a version-4 UUID, as randomUUID makes
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
  const uuid = [
    hex.slice(0, 8),
    hex.slice(8, 12),
    hex.slice(12, 16),
    hex.slice(16, 20),
    hex.slice(20),
  ]
  return `tl-${uuid.join('-')}`
}

/** A JSON POST with an Idempotency-Key (the caller's or a new one), named by its errors too. */
export function keyedPost<S extends z.ZodType>(
  transport: Transport,
  path: string,
  schema: S,
  body: unknown,
  options: { idempotencyKey?: string | undefined; signal?: AbortSignal | undefined },
): Promise<z.output<S>> {
  const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey()
  return transport.json('POST', path, schema, {
    body,
    headers: { 'idempotency-key': idempotencyKey },
    signal: options.signal,
    idempotencyKey,
  })
}

/** Streams a turn into `onEvent`, each event once and in order; answers its result. */
export async function drain(
  stream: TurnStream,
  onEvent: (event: SeqEvent) => void | Promise<void>,
): Promise<TurnResponse> {
  for await (const item of stream) await onEvent(item)
  return stream.result()
}
