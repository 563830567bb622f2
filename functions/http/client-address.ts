import { type AddressRange, addressGroup, inRange, parseAddress } from './address-ranges.ts'

/**
 * Where a request comes from, as its runtime knows it: the socket's peer on Node, Deno's
 * `remoteAddr`, the source IP of a Lambda function URL event, the `CF-Connecting-IP` that
 * Cloudflare sets (and a client cannot) on Workers. `env` is what the runtime handed
 * `app.fetch` besides the request. Undefined where nobody knows (an in-process call).
 */
export type PeerAddress = (request: Request, env: unknown) => string | undefined

/**
 * The client a request is counted for: the peer, unless the peer is a trusted proxy
 * (TURNLINE_TRUSTED_PROXIES) — then `X-Forwarded-For`, read from the right, up to the first
 * address that is not a trusted proxy (what a client writes into the header itself is further
 * left and never reached). IPv6 clients are grouped by /64 (`addressGroup`); `unknown` when the
 * runtime does not say.
 */
export function clientAddress(
  request: Request,
  env: unknown,
  peer: PeerAddress | undefined,
  trustedProxies: readonly AddressRange[],
): string {
  const text = peer?.(request, env)
  let current = text === undefined ? undefined : parseAddress(text)
  if (!current) return 'unknown'
  const trusted = (address: Uint8Array) => trustedProxies.some((range) => inRange(range, address))
  const hops = (request.headers.get('x-forwarded-for') ?? '').split(',').reverse()
  for (const hop of hops) {
    if (!trusted(current)) break
    const next = parseAddress(hop)
    if (!next) break
    current = next
  }
  return addressGroup(current)
}

/** The peer on Node: `@hono/node-server` hands the app `{ incoming, outgoing }`. */
export const nodePeer: PeerAddress = (_request, env) =>
  (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket
    ?.remoteAddress

/** The peer on Deno: `deno serve` hands the app its `ServeHandlerInfo`. */
export const denoPeer: PeerAddress = (_request, env) => {
  const addr = (env as { remoteAddr?: { transport?: string; hostname?: string } } | undefined)
    ?.remoteAddr
  return addr?.transport === 'tcp' ? addr.hostname : undefined
}

/** The peer on Workers: Cloudflare's edge sets `CF-Connecting-IP`, replacing any a client sent. */
export const workerPeer: PeerAddress = (request) =>
  request.headers.get('cf-connecting-ip') ?? undefined

/** The peer on Lambda: the event's source IP (function URLs and HTTP APIs: payload 2.0). */
export const lambdaPeer: PeerAddress = (_request, env) => {
  const event = (env as { event?: LambdaEvent } | undefined)?.event
  return event?.requestContext?.http?.sourceIp ?? event?.requestContext?.identity?.sourceIp
}

interface LambdaEvent {
  requestContext?: { http?: { sourceIp?: string }; identity?: { sourceIp?: string } }
}
