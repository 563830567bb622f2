import type { StdinLike } from './prompt-input.ts'

/** The process around a command: its streams and environment (process in the binary). */
export interface Io {
  stdout: { write(text: string): unknown; isTTY?: boolean }
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number }
  stdin: StdinLike
  env: Readonly<Record<string, string | undefined>>
}

/** Colours on stderr: only on a terminal, never with NO_COLOR, always with FORCE_COLOR. */
export function useColor(io: Io): boolean {
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false
  if (io.env.FORCE_COLOR !== undefined && io.env.FORCE_COLOR !== '0') return true
  return io.stderr.isTTY === true
}
