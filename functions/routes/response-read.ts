import type { Context } from 'hono'
import type { ResponseReadQuery } from '../../src/contract/open-responses-request.ts'
import { endsResponseRun } from '../../src/contract/open-responses-run.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import { backgroundStatus } from '../http/background-response.ts'
import { SSE_TYPE, streamHeaders } from '../http/event-framing.ts'
import { errorJson, mapError } from '../http/http-errors.ts'
import { jsonResponse } from '../http/json-response.ts'
import { EXTENSIONS_HEADER, wantsExtensions } from '../http/open-responses-extensions.ts'
import { wantsEventStream } from '../http/request-input.ts'
import { followMsFor } from '../http/request-time-left.ts'

const PAGE = 1000
const encoder = new TextEncoder()

/**
 * `GET /v1/responses/:id`: the response resource rebuilt from the session's committed events;
 * with `stream=true` (or `Accept: text/event-stream`) the stream itself, from
 * `starting_after` on. The bridge is deterministic, so the rebuilt events carry the sequence
 * numbers the live stream gave them. While the response still runs the stream follows the
 * store (as `GET …/events?follow=1`) and ends with `[DONE]` once it completes; a stream cut off
 * by the follow limit ends without `[DONE]`, and the client resumes with `starting_after`.
 */
export async function readResponse(
  c: Context<AppEnv, string, { out: { param: { id: string }; query: ResponseReadQuery } }>,
  ctx: RouteContext,
): Promise<Response> {
  // Validated by the route (ResponseIdParamsSchema): `resp_<session id>`.
  const sessionId = c.req.valid('param').id.slice('resp_'.length)
  const query = c.req.valid('query')
  const tenant = c.get('tenant')
  const view = await ctx.api.storedResponseView(tenant, sessionId, {
    extensions: wantsExtensions(c.req.header(EXTENSIONS_HEADER)),
  })
  let nextSeq = 0
  let ended = false
  let subtype: string | undefined
  type Bridged = { sequence: number; frame: string }
  const readMore = async (): Promise<{ events: Bridged[]; complete: boolean }> => {
    const page = await ctx.api.readEvents(tenant, sessionId, nextSeq - 1, PAGE)
    nextSeq = page.nextSeq
    // Its end's usage counts the reasoning tokens committed with it.
    if (page.events.some((e) => endsResponseRun(e.line.event as ThreadEvent))) {
      await view.reloadReasoning()
    }
    const events = page.events.flatMap((e) => {
      const event = e.line.event as ThreadEvent
      if (event.type === 'thread.completed') {
        ended = true
        subtype = event.subtype
      }
      return view.events(event)
    })
    return { events, complete: page.complete }
  }
  const caughtUp: Bridged[] = []
  for (;;) {
    const page = await readMore()
    caughtUp.push(...page.events)
    if (page.complete) break
  }
  // A turn waiting on the client's function calls: the response ended with them.
  if (!ended && view.waitingOnClient) {
    caughtUp.push(...view.awaitClientEvents(view.waitUsage))
    ended = true
  }

  const stream = query.stream === 'true' || query.stream === '1'
  if (!stream && !(query.stream === undefined && wantsEventStream(c.req.header('accept')))) {
    // A background response: queued, failed before it ran, or cancelled (its work says).
    const end = { ended, ...(subtype ? { subtype } : {}) }
    const resource = await backgroundStatus(ctx, tenant, sessionId, view, end)
    return jsonResponse(JSON.stringify(resource))
  }
  const after = query.starting_after ?? -1
  const frames = (events: Bridged[]) =>
    events
      .filter((event) => event.sequence > after)
      .map((event) => event.frame)
      .join('')
  const headers = streamHeaders(SSE_TYPE)
  if (ended) return new Response(frames(caughtUp) + view.done, { status: 200, headers })

  const deadline = Date.now() + followMsFor(ctx.follow, c.env)
  let lastWrite = Date.now()
  let first = true
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const write = (text: string) => {
        controller.enqueue(encoder.encode(text))
        lastWrite = Date.now()
      }
      try {
        if (first) {
          first = false
          const text = frames(caughtUp)
          if (text !== '') return write(text)
        }
        for (;;) {
          if (cancelled) return
          if (Date.now() >= deadline) return controller.close()
          if (Date.now() - lastWrite >= ctx.follow.heartbeatMs) return write(': keep-alive\n\n')
          await new Promise((resolve) => setTimeout(resolve, ctx.follow.pollMs))
          const page = await readMore()
          const text = frames(page.events)
          if (ended && page.complete) {
            write(text + view.done)
            return controller.close()
          }
          if (text !== '') return write(text)
        }
      } catch (error) {
        if (cancelled) return
        try {
          write(`event: error\ndata: ${errorJson(mapError(error, ctx.log).body)}\n\n`)
          controller.close()
        } catch {
          // the client is gone
        }
      }
    },
    cancel() {
      cancelled = true
    },
  })
  return new Response(await ctx.followed.hold(tenant, body), { status: 200, headers })
}
