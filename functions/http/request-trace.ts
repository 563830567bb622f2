import type { MiddlewareHandler } from 'hono'
import type { Telemetry } from '../../src/ports/telemetry.ts'
import type { AppEnv } from './app-context.ts'
import { streamedBody, whenBodyEnds } from './body-end.ts'
import { matchedRoute } from './request-log.ts'

/**
 * A server span per request (`<METHOD> <route>`, HTTP semantic conventions), continuing the
 * caller's trace from its `traceparent`, and the request metrics: `http.server.request.duration`
 * by method, route and status, and `turnline.http.server.rejections` for 429s and 5xx. A
 * streamed answer's span and duration last until its body ends.
 */
export function requestTrace(telemetry: Telemetry): MiddlewareHandler<AppEnv> {
  return (c, next) =>
    telemetry.span(
      c.req.method,
      {
        kind: 'server',
        remoteParent: c.req.header('traceparent'),
        attributes: {
          'http.request.method': c.req.method,
          'url.path': new URL(c.req.url).pathname.slice(0, 200),
          'user_agent.original': c.req.header('user-agent')?.slice(0, 200),
        },
      },
      async (span) => {
        const started = Date.now()
        await next()
        const route = matchedRoute(c)
        const status = c.res.status
        if (route) span.rename(`${c.req.method} ${route}`)
        span.set({ 'http.route': route ?? undefined, 'http.response.status_code': status })
        if (status >= 500) span.fail(String(status))
        const tenant = c.get('tenant')
        if (tenant !== undefined) span.set({ 'turnline.tenant': tenant })
        const attributes = {
          'http.request.method': c.req.method,
          'http.route': route ?? undefined,
          'http.response.status_code': status,
        }
        const finish = (end: () => void) => {
          telemetry.record(
            'http.server.request.duration',
            (Date.now() - started) / 1000,
            attributes,
          )
          if (status === 429 || status >= 500) {
            telemetry.count('turnline.http.server.rejections', 1, attributes)
          }
          end()
        }
        const body = streamedBody(c.res)
        if (body) {
          const end = span.deferEnd()
          c.res = new Response(
            whenBodyEnds(body, () => finish(end)),
            c.res,
          )
        } else {
          finish(() => {})
        }
      },
    )
}
