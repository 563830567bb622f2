import { redactCredentials } from '../../src/shared/redact-credentials.ts'
import { shownUrl } from '../../src/shared/shown-url.ts'

/** Where and how one signal (traces or metrics) is sent: OTLP over HTTP, JSON-encoded. */
export interface OtlpEndpoint {
  /** The full URL (…/v1/traces, …/v1/metrics). */
  url: string
  headers: Readonly<Record<string, string>>
  timeoutMs: number
}

/** Told once per failing streak, so a collector that is down does not flood the log. */
export type ExportFailureLog = (entry: Record<string, unknown>) => void

/**
 * Posts OTLP/JSON export requests. A failed export is dropped (telemetry never holds a turn
 * up, nor grows without bound) and logged once until an export succeeds again.
 */
export class OtlpExporter {
  private failing = false

  constructor(
    private readonly endpoint: OtlpEndpoint,
    private readonly fetchImpl: typeof fetch,
    private readonly log: ExportFailureLog,
  ) {}

  async send(body: unknown): Promise<void> {
    try {
      const response = await this.fetchImpl(this.endpoint.url, {
        method: 'POST',
        headers: { ...this.endpoint.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.endpoint.timeoutMs),
      })
      await response.body?.cancel()
      if (!response.ok) throw new Error(`HTTP ${response.status}`)
      this.failing = false
    } catch (error) {
      if (this.failing) return
      this.failing = true
      this.log({
        ts: new Date().toISOString(),
        level: 'warn',
        msg: 'telemetry export failed',
        url: shownUrl(this.endpoint.url),
        error: redactCredentials(error instanceof Error ? error.message : String(error)),
      })
    }
  }
}
