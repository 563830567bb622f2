import { OpenResponseSchema, OpenResponsesEventSchema } from '../src/contract/wire-responses.ts'
import { abortableSleep } from '../src/shared/abortable-sleep.ts'
import { TurnlineApiError, TurnlineConnectionError, TurnlineProtocolError } from './errors.ts'
import { framesOf } from './event-feed.ts'
import type { CallOptions, ResponsesRequest } from './requests.ts'
import { isTransient, type RetryOptions, reconnectDelayMs, retryPolicy } from './retry.ts'
import { parseJson, type Transport } from './transport.ts'
import type { OpenResponse, OpenResponsesEvent } from './types.ts'

const responseOf = (id: string) => `/v1/responses/${encodeURIComponent(id)}`

type StreamOptions = CallOptions & { retry?: RetryOptions }

/**
 * An Idempotency-Key for `POST /v1/responses`, sent only when given: the response's session
 * derives from it, so the same request sent again with it answers the same response, run once.
 * (Not made up by the client: a key with `store: false` is a 400.)
 */
type KeyOption = { idempotencyKey?: string }

const keyed = (key: string | undefined) => ({
  headers: key === undefined ? {} : { 'idempotency-key': key },
  idempotencyKey: key,
})

/**
 * The Open Responses-compatible endpoint (docs/http-api.md): one exec session per response.
 * Streams end at `data: [DONE]`. A stream cut off before it (a dropped connection, the server's
 * follow limit) is resumed from the last `sequence_number` seen with `GET /v1/responses/:id`
 * (`starting_after`): the server keeps running a response whose client went away, and rebuilds
 * its stream with the same numbers, so every event arrives once.
 */
export class ResponsesClient {
  constructor(private readonly transport: Transport) {}

  /** `POST /v1/responses` (not streamed): the finished response resource. */
  create(request: ResponsesRequest, options: CallOptions & KeyOption = {}): Promise<OpenResponse> {
    return this.transport.json('POST', '/v1/responses', OpenResponseSchema, {
      body: { ...request, stream: false },
      signal: options.signal,
      ...keyed(options.idempotencyKey),
    })
  }

  /**
   * `POST /v1/responses` streamed: the Open Responses events as they happen. Once
   * `response.created` named the response, a cut stream continues with {@link events}; one cut
   * before it throws, with the `idempotencyKey` given (then sending it again is safe). Sent
   * again with that key while the key's first request still runs (409 `session_busy` naming the
   * running response), it follows that response from its first event instead.
   */
  async *stream(
    request: ResponsesRequest,
    options: StreamOptions & KeyOption = {},
  ): AsyncGenerator<OpenResponsesEvent, void, undefined> {
    const key = keyed(options.idempotencyKey)
    let response: Response
    try {
      response = await this.transport.send('POST', '/v1/responses', {
        body: { ...request, stream: true },
        headers: { accept: 'text/event-stream', ...key.headers },
        signal: options.signal,
        idempotencyKey: key.idempotencyKey,
      })
    } catch (error) {
      const running = runningResponseOf(error)
      if (running === undefined) throw error
      yield* this.events(running, options)
      return
    }
    let last = -1
    let responseId: string | undefined
    try {
      for await (const event of openResponsesEvents(response, options.signal)) {
        if (event === DONE) return
        if (event.type === 'response.created') responseId = idOf(event)
        last = event.sequence_number
        yield event
      }
      throw new TurnlineConnectionError('the response stream ended without [DONE]')
    } catch (error) {
      options.signal?.throwIfAborted()
      if (responseId === undefined && error instanceof TurnlineConnectionError) {
        throw new TurnlineConnectionError(error.message, key.idempotencyKey, { cause: error })
      }
      if (responseId === undefined || !isTransient(error)) throw error
    }
    yield* this.events(responseId, { ...options, startingAfter: last })
  }

  /** `GET /v1/responses/:id`: the response rebuilt from its session's committed events. */
  get(id: string, options: CallOptions = {}): Promise<OpenResponse> {
    return this.transport.json('GET', responseOf(id), OpenResponseSchema, options)
  }

  /**
   * `GET /v1/responses/:id?stream=true`: its events after `startingAfter` (default: all),
   * followed while it runs, until `[DONE]`; reconnects after a cut (bounded, with backoff).
   */
  async *events(
    id: string,
    options: StreamOptions & { startingAfter?: number } = {},
  ): AsyncGenerator<OpenResponsesEvent, void, undefined> {
    const policy = retryPolicy(options.retry)
    let last = options.startingAfter ?? -1
    let failures = 0
    for (;;) {
      try {
        const response = await this.transport.send('GET', responseOf(id), {
          query: { stream: 'true', ...(last >= 0 ? { starting_after: last } : {}) },
          headers: { accept: 'text/event-stream' },
          signal: options.signal,
          headTimeoutMs: policy.idleTimeoutMs,
        })
        for await (const event of openResponsesEvents(
          response,
          options.signal,
          policy.idleTimeoutMs,
        )) {
          if (event === DONE) return
          if (event.sequence_number <= last) continue
          last = event.sequence_number
          failures = 0
          yield event
        }
        throw new TurnlineConnectionError(`the response stream ended without [DONE] after ${last}`)
      } catch (error) {
        options.signal?.throwIfAborted()
        failures += 1
        if (!isTransient(error) || failures > policy.maxAttempts) throw error
        await abortableSleep(reconnectDelayMs(policy, failures, error), options.signal)
      }
    }
  }
}

const DONE = Symbol('[DONE]')

/**
 * The response a keyed `POST /v1/responses` was refused for while it runs: the 409
 * `session_busy`'s `details.response_id` (follow it with `responses.events(id)`, read it with
 * `responses.get(id)` once it ended); undefined for any other error.
 */
export function runningResponseOf(error: unknown): string | undefined {
  if (!(error instanceof TurnlineApiError) || error.code !== 'session_busy') return undefined
  const id = error.details?.response_id
  return typeof id === 'string' && id !== '' ? id : undefined
}

/**
 * The events of a response stream. `idleMs`: the silence that counts as a dropped connection,
 * for the followed GET, whose server sends keep-alives (the POST's does not while it runs).
 */
async function* openResponsesEvents(
  response: Response,
  signal: AbortSignal | undefined,
  idleMs?: number,
): AsyncGenerator<OpenResponsesEvent | typeof DONE, void, undefined> {
  if (!response.body) throw new TurnlineProtocolError('the response stream has no body', 200)
  for await (const frame of framesOf(response.body, signal, idleMs)) {
    if (frame.data === '[DONE]') {
      yield DONE
      return
    }
    yield parseJson(OpenResponsesEventSchema, frame.data, 200)
  }
}

function idOf(event: OpenResponsesEvent): string | undefined {
  const response = (event as { response?: unknown }).response
  if (typeof response !== 'object' || response === null) return undefined
  const id = (response as { id?: unknown }).id
  return typeof id === 'string' ? id : undefined
}
