/**
 * The remote stores of bench/turn-cost-user.ts's S3 + Upstash variant, as one process beside
 * the services (`npm run services:start`): the Upstash REST proxy in front of redis-server
 * (test/support/upstash-proxy.ts), which notes each request itself, and moto_server behind a
 * forwarder that passes every request on over a kept-alive connection (one loopback hop more;
 * hop-by-hop headers are not passed on, so the server keeps its connection to the forwarder as
 * it would to S3). Both note when each request started and ended, so the bench can tell per turn
 * how many requests each store got and how many round trips were sequential (requests whose
 * intervals overlap count as one round trip).
 */
import {
  Agent,
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  request,
} from 'node:http'
import type { AddressInfo } from 'node:net'
import { startUpstashProxy } from '../../test/support/upstash-proxy.ts'

export interface StoreTrips {
  s3: number
  upstash: number
  /** Bytes of the bodies of the requests to S3 (the objects and parts put, and a few XML lists). */
  s3Bytes: number
  /** Groups of overlapping requests, in time order: the sequential round trips. */
  sequential: number
}

interface Span {
  kind: 's3' | 'upstash'
  from: number
  to: number
  /** Bytes of the request's body. */
  bytes: number
}

/**
 * Headers of one hop (RFC 9110 §7.6.1), not passed on. moto answers every request with
 * `Connection: close`: passed on, it made the server's S3 client open a new connection to this
 * forwarder for every request, which a real S3 endpoint does not make it do.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
])

const endToEnd = (headers: IncomingHttpHeaders): OutgoingHttpHeaders =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)))

/**
 * Passes every request on to `target` over a kept-alive connection, noting when it ran; with
 * `rttMs`, after holding it that long (a store that far away: its answer comes one RTT later).
 */
async function countingForwarder(
  target: URL,
  rttMs: number,
  done: (from: number, bytes: number) => void,
) {
  const agent = new Agent({ keepAlive: true })
  const server = createServer((req, res) => {
    const from = performance.now()
    let bytes = 0
    req.on('data', (chunk: Buffer) => {
      bytes += chunk.byteLength
    })
    if (rttMs > 0) req.pause()
    const forward = () => {
      const out = request(
        {
          host: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers: endToEnd(req.headers),
          agent,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers))
          answer.pipe(res)
          answer.once('end', () => done(from, bytes))
        },
      )
      out.once('error', (error) => {
        res.writeHead(502)
        res.end(String(error))
      })
      req.pipe(out)
    }
    if (rttMs > 0) setTimeout(forward, rttMs)
    else forward()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
      agent.destroy()
    },
  }
}

export async function startStorePeers(options: {
  redisUrl: string
  s3Endpoint: string
  /** Added to every request to either store (default 0: loopback). */
  rttMs?: number
}) {
  const rtt = options.rttMs ?? 0
  let spans: Span[] = []
  const note = (kind: Span['kind']) => (from: number, bytes: number) =>
    spans.push({ kind, from, to: performance.now(), bytes })
  const upstashDone = note('upstash')
  const upstash = await startUpstashProxy({
    redisUrl: options.redisUrl,
    holdMs: rtt,
    observe: ({ from, bytes }) => upstashDone(from, bytes),
  })
  const s3Front = await countingForwarder(new URL(options.s3Endpoint), rtt, note('s3'))
  return {
    upstashUrl: upstash.url,
    upstashToken: upstash.token,
    s3Endpoint: s3Front.url,
    /** What happened since the last call. */
    trips(): StoreTrips {
      const taken = spans.sort((a, b) => a.from - b.from)
      spans = []
      upstash.resetStats() // the proxy's own record of requests is not read here
      let sequential = 0
      let end = Number.NEGATIVE_INFINITY
      for (const span of taken) {
        if (span.from > end) sequential++
        end = Math.max(end, span.to)
      }
      const count = (kind: Span['kind']) => taken.filter((s) => s.kind === kind).length
      const s3Bytes = taken.filter((s) => s.kind === 's3').reduce((sum, s) => sum + s.bytes, 0)
      return { s3: count('s3'), upstash: count('upstash'), s3Bytes, sequential }
    },
    async close() {
      await s3Front.close()
      await upstash.close()
    },
  }
}
