/**
 * Traces and metrics (docs/observability.md). The engine names what it does — a tool call, a
 * compaction — and the deployment decides whether anything is recorded: without an exporter
 * configured the engine runs on `noTelemetry`, whose spans only call the function they wrap.
 * The current span is the implementation's business (an async context on the runtimes that
 * have one), so a span opened anywhere below a request nests under it without being passed.
 */

/** A span or metric attribute (OpenTelemetry's: a scalar or a list of strings). */
export type TelemetryValue = string | number | boolean | readonly string[]

/** Attributes to record; `undefined` values are left out. */
export type TelemetryAttributes = Readonly<Record<string, TelemetryValue | undefined>>

/** `server`: the handling of an incoming request; `client`: a call out; `internal`: the rest. */
export type SpanKind = 'internal' | 'server' | 'client'

/** The span a wrapped function runs in. */
export interface ActiveSpan {
  /** Adds (or replaces) attributes. */
  set(attributes: TelemetryAttributes): void
  /** Marks the span failed (status error, `error.type`) without throwing. */
  fail(errorType: string, message?: string): void
  /** Names the span anew (an HTTP span once its route is known). */
  rename(name: string): void
  /**
   * The span then ends when the function returned is called, not when its function settles
   * (a streamed answer's span lasts until the stream ends).
   */
  deferEnd(): () => void
}

/** A span ended by its owner (a stream's span, which no function call covers). */
export interface OpenSpan extends ActiveSpan {
  end(): void
}

export interface SpanOptions {
  kind?: SpanKind
  attributes?: TelemetryAttributes
  /** A `server` span's incoming W3C `traceparent`: the trace it continues. */
  remoteParent?: string | undefined
}

/** The metric instruments the service records into (names in docs/observability.md). */
export type HistogramName =
  | 'gen_ai.client.token.usage'
  | 'gen_ai.client.operation.duration'
  | 'turnline.turn.duration'
  | 'http.server.request.duration'

export type CounterName = 'turnline.turns' | 'turnline.http.server.rejections'

export interface Telemetry {
  /** False for `noTelemetry`: callers may skip work that only feeds attributes. */
  readonly enabled: boolean
  /**
   * Prompt and completion content may be recorded on spans
   * (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT); off by default.
   */
  readonly captureContent: boolean
  /**
   * Runs `run` in a new span, a child of the current one; the span ends when `run` settles (a
   * throw marks it failed with the error's code and is rethrown).
   */
  span<T>(name: string, options: SpanOptions, run: (span: ActiveSpan) => Promise<T>): Promise<T>
  /** Opens a child of the current span that ends at `end()`; it does not become current. */
  start(name: string, options: SpanOptions): OpenSpan
  /** Adds a value to a histogram. */
  record(name: HistogramName, value: number, attributes: TelemetryAttributes): void
  /** Adds to a counter. */
  count(name: CounterName, value: number, attributes: TelemetryAttributes): void
}

/** A span that records nothing (what `noTelemetry` and unsampled traces hand out). */
export const NO_SPAN: OpenSpan = {
  set: () => {},
  fail: () => {},
  rename: () => {},
  deferEnd: () => () => {},
  end: () => {},
}

/** Records nothing: spans only call what they wrap. */
export const noTelemetry: Telemetry = {
  enabled: false,
  captureContent: false,
  span: (_name, _options, run) => run(NO_SPAN),
  start: () => NO_SPAN,
  record: () => {},
  count: () => {},
}
