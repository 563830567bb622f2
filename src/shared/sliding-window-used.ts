/**
 * The sliding-window estimate of requests in the last `windowMs` (the algorithm of
 * `@upstash/ratelimit`'s `slidingWindow`, on its keys): the current fixed window plus the
 * previous one weighted by the part of it still inside the sliding window.
 */
export function slidingWindowUsed(
  current: number,
  previous: number,
  nowMs: number,
  windowMs: number,
): number {
  const elapsed = (nowMs % windowMs) / windowMs
  return Math.floor((1 - elapsed) * previous) + current
}
