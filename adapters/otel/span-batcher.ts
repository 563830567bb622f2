import { backgroundTimer } from './background-timer.ts'
import type { OtlpExporter } from './otlp-exporter.ts'
import { type FinishedSpan, type OtlpKeyValue, traceRequest } from './otlp-json.ts'

export interface BatchLimits {
  /** OTEL_BSP_SCHEDULE_DELAY: how long a finished span may wait for its batch (ms). */
  scheduleDelayMs: number
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans kept while waiting; more are dropped. */
  maxQueueSize: number
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per export request. */
  maxExportBatchSize: number
}

/**
 * The batch span processor: finished spans wait until the schedule delay passes or a batch is
 * full, then go out in one request; `flush` sends what waits and waits for what is in flight
 * (a server's shutdown, the end of a serverless invocation).
 */
export class SpanBatcher {
  private queue: FinishedSpan[] = []
  private cancelTimer: (() => void) | undefined
  private readonly inFlight = new Set<Promise<void>>()

  constructor(
    private readonly exporter: OtlpExporter,
    private readonly resource: OtlpKeyValue[],
    private readonly limits: BatchLimits,
  ) {}

  add(span: FinishedSpan): void {
    if (this.queue.length >= this.limits.maxQueueSize) return
    this.queue.push(span)
    if (this.queue.length >= this.limits.maxExportBatchSize) {
      this.sendQueued()
    } else {
      this.cancelTimer ??= backgroundTimer(this.limits.scheduleDelayMs, () => this.sendQueued())
    }
  }

  async flush(): Promise<void> {
    this.sendQueued()
    await Promise.all([...this.inFlight])
  }

  private sendQueued(): void {
    this.cancelTimer?.()
    this.cancelTimer = undefined
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxExportBatchSize)
      const sending = this.exporter.send(traceRequest(this.resource, batch))
      this.inFlight.add(sending)
      void sending.finally(() => this.inFlight.delete(sending))
    }
  }
}
