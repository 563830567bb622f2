import type { SessionApi } from '../../src/core/session-api.ts'
import type { TimerClock } from '../../src/ports/clock.ts'
import { sleepOn } from '../../src/shared/sleep-on.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import type { EventPage, SequencedEvent } from '../../src/store/read-events.ts'
import {
  eventFrame,
  NDJSON_TYPE,
  SSE_TYPE,
  sequencedLine,
  sseFrame,
  streamHeaders,
} from './event-framing.ts'
import type { FollowedStreams } from './followed-streams.ts'
import { type ErrorLog, errorJson, mapError } from './http-errors.ts'
import type { RequestTimeLeft } from './request-time-left.ts'

/** How `follow=1` polls the store. */
export interface FollowOptions {
  /** Wait between polls once the feed has caught up. */
  pollMs: number
  /** A followed feed ends after this long; SSE clients reconnect with Last-Event-ID. */
  maxMs: number
  /** SSE comment sent when nothing else was written for this long. */
  heartbeatMs: number
  /** Times the polls, the keep-alives and the feed's end (default: the system clock). */
  clock?: TimerClock
  /** The platform's bound on a request (Lambda's timeout): a feed ends before it. */
  timeLeft?: RequestTimeLeft
}

export const DEFAULT_FOLLOW: FollowOptions = { pollMs: 1000, maxMs: 300_000, heartbeatMs: 15_000 }

export interface FeedRequest {
  api: SessionApi
  tenant: string
  sessionId: string
  /** Events with seq > after. */
  after: number
  limit: number
  follow: boolean
  sse: boolean
  options: FollowOptions
  /** Holds a followed stream as one of the tenant's (429 past the bound). */
  followed: FollowedStreams
  log: ErrorLog
}

const encoder = new TextEncoder()

/**
 * `GET /v1/sessions/:id/events`: NDJSON `{"seq","schema_version","event"}` lines, or SSE frames
 * (`id:` = seq). Without follow, one page. With follow, the store is polled until the session
 * completes (thread.completed is its last event), the client disconnects, or `maxMs` passes.
 * The first page is read before answering, so a missing session is a plain 404.
 */
export async function eventFeedResponse(request: FeedRequest): Promise<Response> {
  const { api, tenant, sessionId, limit, sse, options } = request
  const format = (e: SequencedEvent) =>
    sse ? eventFrame(e.seq, e.line.event, e.text) : sequencedLine(e.seq, e.line, e.text)
  const first = await api.readEvents(tenant, sessionId, request.after, limit)
  const headers = {
    ...streamHeaders(sse ? SSE_TYPE : NDJSON_TYPE),
    'turnline-next-seq': String(first.nextSeq),
  }
  let ended = hasCompletion(first)
  if (request.follow && !ended && first.complete && first.events.length === 0) {
    ended = (await api.getSession(tenant, sessionId)).status === 'completed'
  }
  if (!request.follow || (ended && first.complete)) {
    return new Response(first.events.map(format).join(''), { status: 200, headers })
  }

  const clock = options.clock ?? systemClock
  const deadline = clock.now() + options.maxMs
  const abort = new AbortController()
  let page: EventPage = first
  let firstSent = false
  let lastWrite = clock.now()

  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const write = (text: string) => {
        controller.enqueue(encoder.encode(text))
        lastWrite = clock.now()
      }
      try {
        if (!firstSent) {
          firstSent = true
          if (first.events.length > 0) return write(first.events.map(format).join(''))
        }
        for (;;) {
          if (abort.signal.aborted) return
          if ((ended && page.complete) || clock.now() >= deadline) return controller.close()
          if (page.complete) {
            const idle = clock.now() - lastWrite
            if (sse && idle >= options.heartbeatMs) return write(': keep-alive\n\n')
            await sleepOn(clock, Math.min(options.pollMs, deadline - clock.now()), abort.signal)
            if (abort.signal.aborted) return
          }
          page = await api.readEvents(tenant, sessionId, page.nextSeq - 1, limit)
          ended ||= hasCompletion(page)
          if (page.events.length > 0) return write(page.events.map(format).join(''))
        }
      } catch (error) {
        if (abort.signal.aborted) return
        const body = errorJson(mapError(error, request.log).body)
        try {
          write(sse ? sseFrame({ event: 'error', data: body }) : `${body}\n`)
          controller.close()
        } catch {
          // the client is gone
        }
      }
    },
    cancel() {
      abort.abort()
    },
  })
  return new Response(await request.followed.hold(tenant, stream), { status: 200, headers })
}

function hasCompletion(page: EventPage): boolean {
  return page.events.some((e) => e.line.event.type === 'thread.completed')
}
