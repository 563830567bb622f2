/** Micro-USD (integers, as the tenant counters store cost) from USD. */
export function toMicroUsd(usd: number): number {
  return Math.max(0, Math.round(usd * 1_000_000))
}
