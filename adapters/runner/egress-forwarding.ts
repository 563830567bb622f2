import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http'
import { connect, type Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { formatIp, type IpAddress } from '../../src/shared/ip-address.ts'
import type { EgressDecision } from '../shared/egress-policy.ts'
import { nodeHttp } from './node-http.ts'

/**
 * The two ways a command's HTTP client uses a forward proxy: `CONNECT host:port` (a tunnel,
 * for TLS) and absolute-form HTTP (`GET http://host/path`). Each destination is checked first
 * (`check`, the egress policy), and the connection goes to an address the check returned —
 * never to the name again.
 */

export type EgressCheck = (method: string, host: string, port: number) => Promise<EgressDecision>

const CONNECT_TIMEOUT_MS = 10_000
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

/** A refusal or failure as the proxy's own answer, plain text, marked `x-turnline-egress`. */
function rawAnswer(status: number, reason: string, text: string): string {
  const body = `turnline egress: ${text}\n`
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain; charset=utf-8\r\n` +
    `x-turnline-egress: ${status === 403 ? 'refused' : 'failed'}\r\nconnection: close\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

function answer(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent) {
    res.destroy()
    return
  }
  const body = `turnline egress: ${text}\n`
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-turnline-egress': status === 403 ? 'refused' : 'failed',
    connection: 'close',
    'content-length': Buffer.byteLength(body),
  })
  res.end(body)
}

const refusedText = (target: string, reason: string) =>
  `${target} refused: ${reason} (commands reach the public internet only; ` +
  'an operator keeps other hosts reachable with TURNLINE_EGRESS_ALLOW)'

/** Connects to the first of `addresses` that answers (in the resolver's order). */
export function connectChecked(addresses: IpAddress[], port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    let next = 0
    let lastError: Error | undefined
    const attempt = () => {
      const ip = addresses[next++]
      if (!ip) {
        reject(lastError ?? new Error('no address to connect to'))
        return
      }
      const address = formatIp(ip)
      const socket = connect({ host: address, port, family: ip.family })
      const timer = setTimeout(
        () => socket.destroy(new Error(`${address}:${port} did not answer within 10 s`)),
        CONNECT_TIMEOUT_MS,
      )
      const failed = (error: Error) => {
        clearTimeout(timer)
        lastError = error
        attempt()
      }
      socket.once('error', failed)
      socket.once('connect', () => {
        clearTimeout(timer)
        socket.removeListener('error', failed)
        resolve(socket)
      })
    }
    attempt()
  })
}

/** `host:port` or `[v6]:port` of a CONNECT, the host in its canonical form (as a URL has it). */
function authority(target: string | undefined): { host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]/?#@\s]+):(\d{1,5})$/.exec(target ?? '')
  if (!match?.[1] || !match[2]) return undefined
  try {
    return { host: new URL(`http://${match[1]}/`).hostname, port: Number(match[2]) }
  } catch {
    return undefined
  }
}

/** CONNECT: check, connect to a checked address, answer 200, then relay bytes both ways. */
export async function tunnel(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  check: EgressCheck,
): Promise<void> {
  client.on('error', () => {})
  const target = authority(req.url)
  if (!target) {
    client.end(rawAnswer(400, 'Bad Request', `CONNECT needs host:port, not ${req.url}`))
    return
  }
  const named = `${target.host}:${target.port}`
  const decision = await check('CONNECT', target.host, target.port)
  if (!decision.ok) {
    client.end(rawAnswer(403, 'Forbidden', refusedText(named, decision.reason)))
    return
  }
  let upstream: Socket
  try {
    upstream = await connectChecked(decision.addresses, target.port)
  } catch (error) {
    client.end(rawAnswer(502, 'Bad Gateway', `${named}: ${(error as Error).message}`))
    return
  }
  if (client.destroyed) {
    upstream.destroy()
    return
  }
  upstream.on('error', () => client.destroy())
  client.on('close', () => upstream.destroy())
  upstream.on('close', () => client.destroy())
  client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
  if (head.byteLength > 0) upstream.write(head)
  upstream.pipe(client)
  client.pipe(upstream)
}

/** The end-to-end headers of a message (RFC 9110 §7.6.1: hop-by-hop ones are the proxy's). */
function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const listed = String(headers.connection ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
  const kept: IncomingHttpHeaders = {}
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name) && !listed.includes(name) && value !== undefined) kept[name] = value
  }
  return kept
}

/** Absolute-form HTTP: check, then forward the request to a checked address. */
export async function forward(
  req: IncomingMessage,
  res: ServerResponse,
  check: EgressCheck,
): Promise<void> {
  let url: URL
  try {
    url = new URL(req.url ?? '')
  } catch {
    answer(res, 400, 'this is a forward proxy: send absolute URLs (http://host/path), or CONNECT')
    return
  }
  if (url.protocol !== 'http:') {
    answer(res, 400, `only http:// is forwarded; ${url.protocol} goes through CONNECT`)
    return
  }
  const port = url.port === '' ? 80 : Number(url.port)
  const decision = await check(req.method ?? 'GET', url.hostname, port)
  if (!decision.ok) {
    answer(res, 403, refusedText(`${url.hostname}:${port}`, decision.reason))
    return
  }
  let socket: Socket
  try {
    socket = await connectChecked(decision.addresses, port)
  } catch (error) {
    answer(res, 502, `${url.host}: ${(error as Error).message}`)
    return
  }
  const upstream = nodeHttp.request({
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers: { ...endToEnd(req.headers), host: url.host },
    setHost: false,
    createConnection: () => socket,
  })
  upstream.on('response', (response) => {
    res.writeHead(response.statusCode ?? 502, response.statusMessage, endToEnd(response.headers))
    response.pipe(res)
    response.on('error', () => res.destroy())
  })
  upstream.on('error', (error) => answer(res, 502, `${url.host}: ${error.message}`))
  res.on('close', () => upstream.destroy())
  req.pipe(upstream)
}
