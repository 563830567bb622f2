/**
 * How long the platform still lets this request run, read from the bindings the entry hands the
 * app (`c.env`); undefined where nothing bounds it (Node, Deno, a Worker's HTTP request).
 */
export type RequestTimeLeft = (env: unknown) => number | undefined

/** What a followed feed keeps for itself to end its stream before the platform's bound. */
export const FEED_END_MARGIN_MS = 5_000

/**
 * Lambda: the invocation's remaining time, `getRemainingTimeInMillis()` of the context that
 * hono/aws-lambda passes as `context` (streamHandle) or `lambdaContext` (handle).
 */
export const lambdaTimeLeft: RequestTimeLeft = (env) => {
  if (typeof env !== 'object' || env === null) return undefined
  for (const name of ['context', 'lambdaContext']) {
    const context: unknown = Reflect.get(env, name)
    if (typeof context !== 'object' || context === null) continue
    const remaining: unknown = Reflect.get(context, 'getRemainingTimeInMillis')
    if (typeof remaining !== 'function') continue
    const ms: unknown = remaining.call(context)
    if (typeof ms === 'number' && Number.isFinite(ms)) return ms
  }
  return undefined
}

/**
 * How long a followed feed of this request may stay open: `maxMs`, cut so that it ends (cleanly,
 * the client resuming with Last-Event-ID) before the platform ends the invocation.
 */
export function followMsFor(
  follow: { maxMs: number; timeLeft?: RequestTimeLeft | undefined },
  env: unknown,
): number {
  const left = follow.timeLeft?.(env)
  if (left === undefined) return follow.maxMs
  return Math.max(0, Math.min(follow.maxMs, left - FEED_END_MARGIN_MS))
}
