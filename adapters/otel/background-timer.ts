/**
 * A timer that does not keep a process alive (Node and Deno timers have `unref`; elsewhere it
 * is a plain timer): exports are never the reason a CLI run or a test process lingers.
 */
export function backgroundTimer(ms: number, fire: () => void): () => void {
  const timer: unknown = setTimeout(fire, ms)
  ;(timer as { unref?: () => void }).unref?.()
  return () => clearTimeout(timer as ReturnType<typeof setTimeout>)
}
