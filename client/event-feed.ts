import { parseEventLine } from '../src/contract/serialize.ts'
import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import { EventFeedLineSchema, SessionSummarySchema } from '../src/contract/wire-responses.ts'
import { abortableSleep } from '../src/shared/abortable-sleep.ts'
import { boundedBody, declaredLength, positiveBytes } from './answer-bound.ts'
import {
  apiErrorOf,
  causeOf,
  TurnlineApiError,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from './errors.ts'
import { isTransient, type RetryOptions, reconnectDelayMs, retryPolicy } from './retry.ts'
import { lines, type SseFrame, sseFrames } from './sse.ts'
import { parseJson, type Transport } from './transport.ts'
import type { SeqEvent } from './types.ts'

export interface EventsOptions {
  /** Events with a seq above this one (default -1: from the first). */
  after?: number
  /** The SSE id of the last event already seen (wins over `after`): resume after it. */
  lastEventId?: string | number
  /** Keep the connection open and deliver new events until `thread.completed` (SSE). */
  follow?: boolean
  /** Events per request when not following (default 1000, at most 5000). */
  limit?: number
  /** Aborts the reading: the iteration rejects with the signal's reason. */
  signal?: AbortSignal
  /** Reconnection after a dropped connection. */
  retry?: RetryOptions
}

export interface EventPage {
  events: SeqEvent[]
  /** The seq after this page (header `Turnline-Next-Seq`): the next page is `after: nextSeq - 1`. */
  nextSeq: number | undefined
}

const path = (sessionId: string) => `/v1/sessions/${encodeURIComponent(sessionId)}/events`

/** The most events a page may hold when none was asked: the contract's largest `limit`. */
export const MAX_PAGE_EVENTS = 5000

/**
 * One page of the NDJSON events feed: events with seq > `after`, at most `limit`. The server
 * sends a page at once (no keep-alives): a silence past `idleMs`, its head included, fails it as
 * a dropped connection. What a page holds is bounded: more lines than `limit` (or
 * {@link MAX_PAGE_EVENTS}) fail it with a TurnlineProtocolError, more bytes than `maxBytes` with a
 * TurnlineAnswerTooLargeError; the rest is not read either way.
 */
export async function readEventPage(
  transport: Transport,
  sessionId: string,
  options: {
    after?: number
    limit?: number
    signal?: AbortSignal | undefined
    idleMs: number
    maxBytes?: number | undefined
  },
): Promise<EventPage> {
  const maxBytes = positiveBytes('maxBytes', options.maxBytes ?? transport.maxAnswerBytes)
  const response = await transport.send('GET', path(sessionId), {
    query: { after: options.after, limit: options.limit },
    headers: { accept: 'application/x-ndjson' },
    signal: options.signal,
    headTimeoutMs: options.idleMs,
  })
  const maxLines = options.limit ?? MAX_PAGE_EVENTS
  const body = await boundedBody(
    response.body,
    response.status,
    maxBytes,
    declaredLength(response),
    {
      what: 'an events page',
      ...(options.maxBytes === undefined ? {} : { option: 'maxBytes' }),
      hint: 'ask for fewer events a page (limit)',
    },
  )
  const events: SeqEvent[] = []
  if (body) {
    try {
      for await (const line of lines(body, { idleMs: options.idleMs })) {
        if (line.trim() === '') continue
        if (events.length >= maxLines) {
          throw new TurnlineProtocolError(
            `an events page passed the ${maxLines} events asked for; the rest was not read`,
            response.status,
          )
        }
        const { seq, event } = parseJson(EventFeedLineSchema, line, response.status)
        events.push({ seq, id: String(seq), event })
      }
    } catch (error) {
      throw readFault(error, options.signal)
    }
  }
  const next = Number(response.headers.get('turnline-next-seq') ?? Number.NaN)
  return { events, nextSeq: Number.isInteger(next) ? next : undefined }
}

/**
 * A session's events in seq order, each exactly once. Without `follow`, every committed event
 * after `after`, page by page. With `follow`, the SSE feed until `thread.completed`: when the
 * connection drops it reconnects with `Last-Event-ID` (bounded attempts with backoff), when the
 * server ends the stream (its follow limit) it reconnects at once, and a gap in the seqs is read
 * from the NDJSON feed, so nothing is missed and nothing is delivered twice.
 */
export async function* eventFeed(
  transport: Transport,
  sessionId: string,
  options: EventsOptions = {},
): AsyncGenerator<SeqEvent, void, undefined> {
  const policy = retryPolicy(options.retry)
  const { signal } = options
  const limit = options.limit ?? 1000
  let last = startSeq(options)
  let failures = 0
  const retryOrThrow = async (error: unknown) => {
    signal?.throwIfAborted()
    failures += 1
    if (!isTransient(error) || failures > policy.maxAttempts) throw error
    await abortableSleep(reconnectDelayMs(policy, failures, error), signal)
  }

  if (!options.follow) {
    for (;;) {
      let page: EventPage
      try {
        page = await readEventPage(transport, sessionId, {
          after: last,
          limit,
          signal,
          idleMs: policy.idleTimeoutMs,
        })
      } catch (error) {
        await retryOrThrow(error)
        continue
      }
      failures = 0
      for (const item of page.events) {
        if (item.seq <= last) continue
        last = item.seq
        yield item
      }
      if (page.events.length < limit) return
    }
  }

  for (;;) {
    signal?.throwIfAborted()
    const opened = Date.now()
    let delivered = 0
    try {
      const response = await transport.send('GET', path(sessionId), {
        query: { follow: 1, ...(last >= 0 ? { after: last } : {}) },
        headers: {
          accept: 'text/event-stream',
          'last-event-id': last >= 0 ? String(last) : undefined,
        },
        signal,
        headTimeoutMs: policy.idleTimeoutMs,
      })
      if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
        throw new TurnlineProtocolError('the followed feed is not an event stream', response.status)
      }
      if (!response.body) throw new TurnlineProtocolError('the event stream has no body', 200)
      for await (const frame of framesOf(response.body, signal, policy.idleTimeoutMs)) {
        if (frame.event === 'error') throw apiErrorOf(undefined, frame.data, { inStream: true })
        if (frame.id === undefined) continue
        const seq = seqOf(frame.id)
        if (seq <= last) continue
        if (seq > last + 1) {
          // Never expected from the server, but a gap is read rather than lost.
          for await (const item of eventFeed(transport, sessionId, { after: last, signal })) {
            if (item.seq >= seq) break
            last = item.seq
            yield item
          }
        }
        const event = eventOf(frame.data)
        last = seq
        failures = 0
        delivered += 1
        yield { seq, id: frame.id, event }
        if (event.type === 'thread.completed') return
      }
      // The server ended the stream: its follow limit, or a session that completed before
      // `after` (nothing more will come). Otherwise reconnect at once — unless it ends at once
      // with nothing in it again and again (then with the backoff, and not forever).
      if (await completedThrough(transport, sessionId, last, signal)) return
      if (delivered === 0 && Date.now() - opened < 1000) {
        await retryOrThrow(new TurnlineConnectionError('the event stream ended at once'))
      }
    } catch (error) {
      await retryOrThrow(error)
    }
  }
}

/** Whether the session is completed and every event up to its last was delivered. */
async function completedThrough(
  transport: Transport,
  sessionId: string,
  last: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const view = await transport.json(
    'GET',
    `/v1/sessions/${encodeURIComponent(sessionId)}`,
    SessionSummarySchema,
    { signal },
  )
  return view.status === 'completed' && view.last_seq <= last
}

function startSeq(options: EventsOptions): number {
  if (options.lastEventId !== undefined) return seqOf(String(options.lastEventId))
  return options.after ?? -1
}

/** A frame id as a seq; anything else is not this API. */
export function seqOf(id: string): number {
  const seq = Number(id)
  if (!/^\d+$/.test(id) || !Number.isSafeInteger(seq)) {
    throw new TurnlineProtocolError(`an event id is not a seq: ${id.slice(0, 40)}`, 200)
  }
  return seq
}

/** A frame's event, validated by the contract's schema (unknown types pass through opaque). */
export function eventOf(data: string): ParsedThreadEvent {
  try {
    return parseEventLine(data)
  } catch (error) {
    throw new TurnlineProtocolError(`an event does not match the contract: ${causeOf(error)}`, 200)
  }
}

/** SSE frames of a body; a connection that breaks mid-stream is a TurnlineConnectionError. */
export async function* framesOf(
  body: ReadableStream<Uint8Array>,
  signal?: AbortSignal,
  idleMs?: number,
) {
  const frames = sseFrames(body, { idleMs })
  try {
    for (;;) {
      let next: IteratorResult<SseFrame>
      try {
        next = await frames.next()
      } catch (error) {
        throw readFault(error, signal)
      }
      if (next.done) return
      yield next.value
    }
  } finally {
    // A reader that stops early (the thread completed, a result) lets go of the connection.
    await frames.return(undefined).catch(() => {})
  }
}

function readFault(error: unknown, signal: AbortSignal | undefined): unknown {
  if (signal?.aborted) return signal.reason
  if (
    error instanceof TurnlineApiError ||
    error instanceof TurnlineProtocolError ||
    error instanceof TurnlineConnectionError
  ) {
    return error
  }
  return new TurnlineConnectionError(`the connection broke: ${causeOf(error)}`, undefined, {
    cause: error,
  })
}
