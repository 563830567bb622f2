import { randomBytes } from 'node:crypto'
import { startOtlpReceiver } from '../../test/support/otlp-receiver.ts'

/** Object-store and coordinator calls of one turn, as the server's trace of it shows them. */
export interface TurnCalls {
  objectRequests: number
  coordinatorTrips: number
}

/**
 * Counts each turn's object-store requests and coordinator calls from outside the server: the
 * server exports its traces (OTLP/HTTP, docs/observability.md) to a receiver here, and every
 * turn is POSTed with a `traceparent` of a trace id of its own, which the server continues. A
 * turn's count is the `storage <op>` and `coordinator <op>` spans of its trace — every call the
 * server made on its behalf, the HTTP layer's included; work of no request (none on this
 * workload) has traces of its own and is not counted. `env` is what the server must be told.
 */
export async function startTurnSpanCounts() {
  const receiver = await startOtlpReceiver()
  const traces: string[] = []
  const env: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_SERVICE_NAME: 'turnline-long-session',
    OTEL_METRICS_EXPORTER: 'none',
    OTEL_BSP_SCHEDULE_DELAY: '200',
    // A long turn (a compaction, a 2 MB answer) must not overflow the queue: dropped spans
    // would undercount.
    OTEL_BSP_MAX_QUEUE_SIZE: '100000',
  }
  return {
    env,
    /** The `traceparent` of the next turn's request. */
    nextTurn(): string {
      const trace = randomBytes(16).toString('hex')
      traces.push(trace)
      return `00-${trace}-${randomBytes(8).toString('hex')}-01`
    },
    /** Each turn's calls, in order, once every turn's request span has arrived. */
    async counts(): Promise<TurnCalls[]> {
      const deadline = Date.now() + 120_000
      const served = () => new Set(receiver.spans.filter((s) => s.kind === 2).map((s) => s.traceId))
      while (traces.some((t) => !served().has(t))) {
        if (Date.now() > deadline) throw new Error('the server did not export every turn span')
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
      // Spans that end after the answer (none expected) come in the next export or never.
      let seen = -1
      while (seen !== receiver.spans.length) {
        seen = receiver.spans.length
        await new Promise((resolve) => setTimeout(resolve, 1000))
      }
      if (receiver.rejected.length > 0) throw new Error(receiver.rejected.join('\n'))
      const byTrace = new Map(traces.map((t) => [t, { objectRequests: 0, coordinatorTrips: 0 }]))
      for (const span of receiver.spans) {
        const calls = byTrace.get(span.traceId)
        if (!calls) continue
        if (span.name.startsWith('storage ')) calls.objectRequests += 1
        if (span.name.startsWith('coordinator ')) calls.coordinatorTrips += 1
      }
      return traces.map((t) => byTrace.get(t) as TurnCalls)
    },
    close: () => receiver.close(),
  }
}
