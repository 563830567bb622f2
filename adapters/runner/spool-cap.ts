/** The note that ends a command's output when it reached the spool cap. */
export function spoolFullNote(limitBytes: number): string {
  const mib = Math.round((limitBytes / (1024 * 1024)) * 100) / 100
  return (
    `\n[runner] stopped: the command's output reached the limit of ${mib} MiB the runner records ` +
    '(TURNLINE_SANDBOX_SPOOL_MB); the rest was not recorded\n'
  )
}

/**
 * The spool cap (TURNLINE_SANDBOX_SPOOL_MB): output is recorded up to `limitBytes`, then the
 * note, then nothing more, and `full` is called once (to end the command).
 */
export function cappedAppend(
  limitBytes: number,
  recorded: () => number,
  record: (chunk: Buffer) => void,
  full: () => void,
): (chunk: Buffer) => void {
  let stopped = false
  return (chunk) => {
    if (stopped) return
    const room = limitBytes - recorded()
    if (chunk.byteLength <= room) return record(chunk)
    stopped = true
    record(chunk.subarray(0, Math.max(0, room)))
    record(Buffer.from(spoolFullNote(limitBytes)))
    full()
  }
}
