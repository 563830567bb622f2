import { Hono } from 'hono'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { AppEnv, RouteContext } from '../http/app-context.ts'
import type { Authenticator } from '../http/auth.ts'
import { asOpenResponsesError } from '../http/open-responses-errors.ts'
import { EXTENSIONS_HEADER, wantsExtensions } from '../http/open-responses-extensions.ts'
import { DEFAULT_SOCKET_LIMITS, responsesSocket } from '../http/responses-socket.ts'
import { type SocketUpgrades, wantsWebSocket } from '../http/socket-connection.ts'
import { noQuery } from '../openapi/declared-input.ts'
import { openResponsesErrorAnswers, operation } from '../openapi/route-docs.ts'
import { countRequest } from '../tenancy/request-limit.ts'
import { rateLimited, type Tenancy } from '../tenancy/tenancy.ts'

/** Open sockets one tenant may hold on one server process. */
export const MAX_SOCKETS_PER_TENANT = 32

export interface SocketRouteOptions {
  /** The runtime's upgrades; absent where the runtime serves no WebSocket (Lambda). */
  sockets: SocketUpgrades | undefined
  authenticate: Authenticator
  tenancy: Tenancy | undefined
}

/**
 * `GET /v1/responses` with `Upgrade: websocket`: the Open Responses WebSocket mode
 * (functions/http/responses-socket.ts). Mounted behind the same authentication, host guard,
 * failed-key throttle and request window as every `/v1` route, so a refused upgrade is the HTTP
 * error it would be on `POST /v1/responses` (401, 429, …) and the socket's tenant is the key's.
 * Each later `response.create` is admitted again (key and request window) as a request would be.
 */
export function responsesSocketRoute(ctx: RouteContext, options: SocketRouteOptions) {
  const routes = new Hono<AppEnv>()
  const open = new Map<string, number>()
  routes.get(
    '/responses',
    operation({
      operationId: 'openResponsesWebSocket',
      tags: ['exec'],
      summary: 'Open Responses WebSocket mode',
      description:
        'Upgrade to a WebSocket (`Upgrade: websocket`, the API key in `Authorization` as on every route). Each text message is a `response.create` event: `{"type": "response.create", …}` with the fields of a `POST /v1/responses` body, without `stream`, `stream_options` and `background`; `idempotency_key` is the `Idempotency-Key` of that response. Each response streams as its HTTP stream would, one event per message, no `[DONE]`; responses run one at a time in the order sent; failures are `{"type": "error", "status", "error": {type, code, param, message}}` messages. A `store: false` response can be continued on the same connection with `previous_response_id`. Without `Upgrade: websocket` the answer is 426.',
      responses: {
        101: { description: 'Switching protocols: the WebSocket is open.' },
        426: { description: 'Not a WebSocket upgrade.' },
        ...openResponsesErrorAnswers(401, 501),
      },
    }),
    noQuery,
    async (c) => {
      const request = c.req.raw
      const { sockets } = options
      if (!wantsWebSocket(request)) {
        return refused(426, 'GET /v1/responses is the WebSocket mode: send "Upgrade: websocket"', {
          upgrade: 'websocket',
        })
      }
      if (!sockets) {
        return refused(501, 'this runtime serves no WebSockets: use POST /v1/responses')
      }
      const tenant = c.get('tenant')
      const held = open.get(tenant) ?? 0
      if (held >= MAX_SOCKETS_PER_TENANT) {
        throw new TurnlineError(
          'rate_limited',
          `too many open WebSockets: a tenant may hold ${MAX_SOCKETS_PER_TENANT} on one server`,
          { retryAfter: 1 },
        )
      }
      const authorization = c.req.header('authorization')
      const admit = async () => {
        const again = await options.authenticate(authorization)
        if (again !== tenant) throw new TurnlineError('unauthorized', 'invalid API key')
        if (options.tenancy) {
          const verdict = await countRequest(options.tenancy, tenant, ctx.log)
          if (verdict && !verdict.allowed) {
            throw rateLimited(verdict, options.tenancy.clock.now())
          }
        }
        return tenant
      }
      const extensions = wantsExtensions(c.req.header(EXTENSIONS_HEADER))
      open.set(tenant, held + 1)
      let released = false
      const release = () => {
        if (released) return
        released = true
        const count = (open.get(tenant) ?? 1) - 1
        if (count > 0) open.set(tenant, count)
        else open.delete(tenant)
      }
      sockets.accept(request, (peer) => {
        const session = responsesSocket(peer, {
          api: ctx.api,
          log: ctx.log,
          limits: { ...DEFAULT_SOCKET_LIMITS, maxMessageBytes: ctx.limits.maxBytes },
          admit,
          extensions,
        })
        return {
          message: (data) => session.message(data),
          closed: () => {
            release()
            session.closed()
          },
        }
      })
      // Never sent: the runtime upgrades the connection instead (SocketUpgrades).
      return new Response(null, { status: 200 })
    },
  )
  return routes
}

function refused(status: number, message: string, headers: Record<string, string> = {}) {
  const code = status === 501 ? 'internal' : 'invalid_input'
  return asOpenResponsesError({ status, body: { error: { code, message } }, headers })
}
