/**
 * The remote stores of bench/turn-cost-user.ts's S3 + Upstash variant, counted from a process of
 * its own beside the services (`npm run services:start`): the Upstash REST proxy in front of
 * redis-server (test/support/upstash-proxy.ts), which notes each request itself, and moto_server,
 * which notes each request itself too (its request log, test/support/moto-request-log.ts: the
 * requests signed with the deployment's access key id). The server talks to moto directly, as it
 * would to S3; with `rttMs`, through an HTTP delay proxy that adds that distance. Both stores'
 * intervals are put on one clock (CLOCK_MONOTONIC), so the bench can tell per turn how many
 * requests each store got and how many round trips were sequential (requests whose intervals
 * overlap count as one round trip).
 */
import { monotonicOffsetMs, motoRequestLog } from '../../test/support/moto-request-log.ts'
import { startUpstashProxy } from '../../test/support/upstash-proxy.ts'
import { startHttpDelayProxy } from './delay-proxy.ts'

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
  /** CLOCK_MONOTONIC, in milliseconds. */
  from: number
  to: number
  /** Bytes of the request's body. */
  bytes: number
}

export async function startStorePeers(options: {
  redisUrl: string
  s3Endpoint: string
  /** moto's request log (.tmp/services.json's `s3.requestLog`) and the access key id to count. */
  s3RequestLog: string
  s3AccessKeyId: string
  /** Added to every request to either store (default 0: loopback). */
  rttMs?: number
}) {
  const rtt = options.rttMs ?? 0
  const offset = monotonicOffsetMs()
  let spans: Span[] = []
  const upstash = await startUpstashProxy({
    redisUrl: options.redisUrl,
    holdMs: rtt,
    observe: ({ from, to, bytes }) =>
      spans.push({ kind: 'upstash', from: from + offset, to: to + offset, bytes }),
  })
  const moto = motoRequestLog(options.s3RequestLog, options.s3AccessKeyId)
  const s3Front = rtt > 0 ? await startHttpDelayProxy(options.s3Endpoint, rtt) : undefined
  /** Every request to either store noted since the last call, in the order they started. */
  const take = async (): Promise<Span[]> => {
    const s3 = (await moto.take()).map((r): Span => ({ kind: 's3', ...r }))
    const taken = [...spans, ...s3].sort((a, b) => a.from - b.from)
    spans = []
    upstash.resetStats() // the proxy's own record of requests is not read here
    return taken
  }
  return {
    upstashUrl: upstash.url,
    upstashToken: upstash.token,
    s3Endpoint: s3Front?.url ?? options.s3Endpoint,
    /** What happened since the last call. */
    async trips(): Promise<StoreTrips> {
      return tally(await take())
    },
    /**
     * What happened since the last call, turn by turn: each request counts for the turn during
     * which it started, the turns starting at `starts` (CLOCK_MONOTONIC, ms, ascending; the last
     * runs until now). Requests that started before the first turn (the session's creation) are
     * dropped. One read of moto's log for a whole session, instead of one after every turn.
     */
    async tripsByTurn(starts: number[]): Promise<StoreTrips[]> {
      const turns: Span[][] = starts.map(() => [])
      let turn = -1
      for (const span of await take()) {
        while (turn + 1 < starts.length && span.from >= (starts[turn + 1] as number)) turn++
        if (turn >= 0) turns[turn]?.push(span)
      }
      return turns.map(tally)
    },
    async close() {
      await s3Front?.close()
      moto.close()
      await upstash.close()
    },
  }
}

/** Requests to each store, S3 bytes, and sequential round trips of spans in the order they started. */
function tally(taken: Span[]): StoreTrips {
  let sequential = 0
  let end = Number.NEGATIVE_INFINITY
  let s3 = 0
  let s3Bytes = 0
  for (const span of taken) {
    if (span.from > end) sequential++
    end = Math.max(end, span.to)
    if (span.kind === 's3') {
      s3++
      s3Bytes += span.bytes
    }
  }
  return { s3, upstash: taken.length - s3, s3Bytes, sequential }
}
