import { KeptOutputListSchema } from '../src/contract/wire-responses.ts'
import { boundedBody, declaredLength, positiveBytes } from './answer-bound.ts'
import {
  causeOf,
  TurnlineAnswerTooLargeError,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from './errors.ts'
import type { CallOptions, TurnsQuery } from './requests.ts'
import type { Transport } from './transport.ts'
import type { KeptOutputList } from './types.ts'

/** Bytes `[start, end)` of an output artifact (`end` omitted: to its end). */
export interface ByteRange {
  start: number
  end?: number
}

/** An output artifact's bytes as they arrive, and where they lie in the whole. */
export interface OutputArtifactBytes {
  /** The bytes, streamed from the store chunk by chunk. */
  body: ReadableStream<Uint8Array>
  /** Bytes of the whole artifact. */
  size: number
  /** First byte of `body` in the whole. */
  start: number
  /** One past the last byte of `body`. */
  end: number
}

const path = (sessionId: string, artifactId: string) =>
  `/v1/sessions/${encodeURIComponent(sessionId)}/artifacts/${encodeURIComponent(artifactId)}`

/**
 * Tool outputs a session kept whole (`GET /v1/sessions/:id/artifacts/:artifact_id`): an answer
 * over the inline limit, named `out_…` in its preview (or a command answer's
 * `output_artifact_id`). Immutable, so a range read later gives the same bytes.
 */
export class OutputArtifactsClient {
  constructor(private readonly transport: Transport) {}

  /**
   * `GET /v1/sessions/:id/artifacts`: a page of the tool outputs the session kept whole, each by
   * the call that answered it — a command's among them, whose event names only its spool.
   */
  list(
    sessionId: string,
    query: TurnsQuery = {},
    options: CallOptions = {},
  ): Promise<KeptOutputList> {
    const listing = `/v1/sessions/${encodeURIComponent(sessionId)}/artifacts`
    return this.transport.json('GET', listing, KeptOutputListSchema, {
      query: { ...query },
      signal: options.signal,
    })
  }

  /** Every kept output of the session, page after page. */
  async *all(
    sessionId: string,
    options: CallOptions = {},
  ): AsyncGenerator<KeptOutputList['outputs'][number]> {
    let cursor: string | undefined
    do {
      const page = await this.list(
        sessionId,
        { limit: 200, ...(cursor ? { cursor } : {}) },
        options,
      )
      yield* page.outputs
      cursor = page.cursor
    } while (cursor !== undefined)
  }

  /** The artifact's bytes, whole or one range, as a stream (never held whole in memory). */
  async open(
    sessionId: string,
    artifactId: string,
    options: CallOptions & { range?: ByteRange } = {},
  ): Promise<OutputArtifactBytes> {
    const range = options.range
    const header = range
      ? `bytes=${range.start}-${range.end === undefined ? '' : range.end - 1}`
      : undefined
    const response = await this.transport.send('GET', path(sessionId, artifactId), {
      headers: { range: header },
      signal: options.signal,
    })
    if (!response.body)
      throw new TurnlineProtocolError('an output artifact answered no body', response.status)
    const length = declaredLength(response)
    const ranged = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(response.headers.get('content-range') ?? '')
    if (response.status === 206 && ranged) {
      return {
        body: response.body,
        start: Number(ranged[1]),
        end: Number(ranged[2]) + 1,
        size: Number(ranged[3]),
      }
    }
    if (response.status !== 200 || length === undefined) {
      await response.body.cancel()
      throw new TurnlineProtocolError(
        `an output artifact answered ${response.status} without its size`,
        response.status,
      )
    }
    return { body: response.body, start: 0, end: length, size: length }
  }

  /**
   * The artifact's bytes, whole or one range, in memory: for ranges and small artifacts. At most
   * `maxBytes` (default: the client's `maxAnswerBytes`): a larger one fails with a
   * TurnlineAnswerTooLargeError naming its size, its bytes not read; {@link open} streams it.
   */
  async bytes(
    sessionId: string,
    artifactId: string,
    options: CallOptions & { range?: ByteRange; maxBytes?: number } = {},
  ): Promise<Uint8Array> {
    const maxBytes = positiveBytes('maxBytes', options.maxBytes ?? this.transport.maxAnswerBytes)
    const opened = await this.open(sessionId, artifactId, options)
    const body = await boundedBody(opened.body, 200, maxBytes, opened.end - opened.start, {
      what: `output artifact ${artifactId}`,
      option: options.maxBytes === undefined ? "the client's maxAnswerBytes" : 'maxBytes',
      hint: 'outputs.open streams it',
    })
    try {
      return new Uint8Array(await new Response(body).arrayBuffer())
    } catch (error) {
      if (error instanceof TurnlineAnswerTooLargeError) throw error
      options.signal?.throwIfAborted()
      throw new TurnlineConnectionError(
        `the connection broke while reading output artifact ${artifactId}: ${causeOf(error)}`,
        undefined,
        { cause: error },
      )
    }
  }
}
