/**
 * Text the command did not write itself — a model's answer, a tool's arguments and output, a file
 * path, a server's error message — made safe to write to a terminal, where control characters
 * are commands: OSC 52 sets the clipboard, OSC 0 the window title, CSI moves the cursor and
 * erases lines. C0 controls except newline and tab, DEL and the C1 range (U+0080–U+009F, whose
 * CSI U+009B some terminals obey) are removed; ESC is shown as `␛`, so what a sequence tried to
 * do stays visible (`␛]52;c;…`) without doing it.
 *
 * Where it applies (docs/cli.md#terminal-safety): every human view (progress on stderr, the
 * readable `turnline events`, tables, messages) always — such a view is read on a terminal, and a
 * log of it is replayed on one; data on stdout (`--json` lines, the final answer, `--json`
 * listings) only when stdout is a terminal, and byte-exact when it is a pipe or a file.
 */

/** U+241B SYMBOL FOR ESCAPE: what an ESC is shown as. */
export const SHOWN_ESCAPE = '\u241b'

const ESC = 0x1b

function unsafe(code: number): boolean {
  return (code < 0x20 && code !== 0x0a && code !== 0x09) || (code >= 0x7f && code <= 0x9f)
}

/** `text` without terminal controls (ESC shown as `␛`); the same string when it has none. */
export function terminalSafe(text: string): string {
  let from = 0
  while (from < text.length && !unsafe(text.charCodeAt(from))) from++
  if (from === text.length) return text
  let safe = text.slice(0, from)
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === ESC) safe += SHOWN_ESCAPE
    else if (!unsafe(code)) safe += text[i]
  }
  return safe
}

/** Every string in a JSON-shaped value (an event, a listing) made terminal-safe; a copy. */
export function terminalSafeValue<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T
  if (Array.isArray(value)) return value.map((item) => terminalSafeValue(item)) as T
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) copy[key] = terminalSafeValue(item)
    return copy as T
  }
  return value
}

/**
 * How data goes to stdout: byte-exact to a pipe or a file, terminal-safe to a terminal (where
 * the `--json` lines still parse: JSON escapes every C0 control, so only raw DEL and C1
 * characters inside strings are dropped).
 */
export function stdoutData(stdout: { isTTY?: boolean }): (text: string) => string {
  return stdout.isTTY === true ? terminalSafe : (text) => text
}
