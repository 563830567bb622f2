import { OpenResponseSchema, OpenResponsesEventSchema } from '../src/contract/wire-responses.ts'
import { TurnlineConnectionError, TurnlineProtocolError } from './errors.ts'
import { framesOf } from './event-feed.ts'
import type { CallOptions, ResponsesRequest } from './requests.ts'
import { parseJson, type Transport } from './transport.ts'
import type { OpenResponse, OpenResponsesEvent } from './types.ts'

const responseOf = (id: string) => `/v1/responses/${encodeURIComponent(id)}`

/**
 * The Open Responses-compatible endpoint (docs/http-api.md): one exec session per response.
 * Streams end at `data: [DONE]`; a stream that ends without it was cut off, and `events(id,
 * {startingAfter})` resumes it from the last `sequence_number` seen.
 */
export class ResponsesClient {
  constructor(private readonly transport: Transport) {}

  /** `POST /v1/responses` (not streamed): the finished response resource. */
  create(request: ResponsesRequest, options: CallOptions = {}): Promise<OpenResponse> {
    return this.transport.json('POST', '/v1/responses', OpenResponseSchema, {
      body: { ...request, stream: false },
      signal: options.signal,
    })
  }

  /** `POST /v1/responses` streamed: the Open Responses events as they happen. */
  async *stream(
    request: ResponsesRequest,
    options: CallOptions = {},
  ): AsyncGenerator<OpenResponsesEvent, void, undefined> {
    const response = await this.transport.send('POST', '/v1/responses', {
      body: { ...request, stream: true },
      headers: { accept: 'text/event-stream' },
      signal: options.signal,
    })
    yield* openResponsesEvents(response, options.signal)
  }

  /** `GET /v1/responses/:id`: the response rebuilt from its session's committed events. */
  get(id: string, options: CallOptions = {}): Promise<OpenResponse> {
    return this.transport.json('GET', responseOf(id), OpenResponseSchema, options)
  }

  /** `GET /v1/responses/:id?stream=true`: its events after `startingAfter`, followed live. */
  async *events(
    id: string,
    options: CallOptions & { startingAfter?: number } = {},
  ): AsyncGenerator<OpenResponsesEvent, void, undefined> {
    const response = await this.transport.send('GET', responseOf(id), {
      query: { stream: 'true', starting_after: options.startingAfter },
      headers: { accept: 'text/event-stream' },
      signal: options.signal,
    })
    yield* openResponsesEvents(response, options.signal)
  }
}

async function* openResponsesEvents(
  response: Response,
  signal: AbortSignal | undefined,
): AsyncGenerator<OpenResponsesEvent, void, undefined> {
  if (!response.body) throw new TurnlineProtocolError('the response stream has no body', 200)
  let last: number | undefined
  for await (const frame of framesOf(response.body, signal)) {
    if (frame.data === '[DONE]') return
    const event = parseJson(OpenResponsesEventSchema, frame.data, 200)
    last = event.sequence_number
    yield event
  }
  throw new TurnlineConnectionError(
    `the response stream ended without [DONE]; resume with events(id, { startingAfter: ${last ?? -1} })`,
  )
}
