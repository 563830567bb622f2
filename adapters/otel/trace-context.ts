/**
 * W3C Trace Context (`traceparent`, version 00): the ids a span is known by, read from an
 * incoming request and written on the calls the service makes.
 */
export interface SpanContext {
  /** 32 lowercase hex digits, not all zero. */
  traceId: string
  /** 16 lowercase hex digits, not all zero. */
  spanId: string
  /** The trace is recorded (flag 01): a parent's decision its children follow. */
  sampled: boolean
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/

/** The context an incoming `traceparent` names; undefined when it is absent or malformed. */
export function parseTraceparent(header: string | null | undefined): SpanContext | undefined {
  const match = TRACEPARENT.exec(header?.trim().toLowerCase() ?? '')
  if (!match) return undefined
  const [, version, traceId, spanId, flags, rest] = match as unknown as string[]
  // Version ff is invalid; version 00 has nothing after the flags.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined
  if (/^0+$/.test(traceId as string) || /^0+$/.test(spanId as string)) return undefined
  return {
    traceId: traceId as string,
    spanId: spanId as string,
    sampled: (Number.parseInt(flags as string, 16) & 1) === 1,
  }
}

export function traceparentOf(context: SpanContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`
}

/** `bytes` random bytes as lowercase hex, never all zero. */
export function randomHexId(bytes: 8 | 16): string {
  for (;;) {
    const raw = crypto.getRandomValues(new Uint8Array(bytes))
    if (raw.some((b) => b !== 0)) {
      return Array.from(raw, (b) => b.toString(16).padStart(2, '0')).join('')
    }
  }
}
