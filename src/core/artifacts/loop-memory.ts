import type { MemoryEntry, MemoryKind } from '../../contract/artifacts.ts'

/**
 * Loop memory (VT Code `loop_memory.rs`): `.vtcode/state/notes.md` and `decisions.md`,
 * append-only markdown. A file starts with its header (`# Loop Notes` / `# Loop Decisions` and a
 * blank line), written when the file is empty; each append is one line
 * `- [YYYY-MM-DDTHH:MM:SSZ] <text>` with the text trimmed and its line breaks folded to spaces
 * (one entry stays one line, so the file parses back entry by entry).
 */

export const MEMORY_HEADERS: Readonly<Record<MemoryKind, string>> = {
  notes: '# Loop Notes\n\n',
  decisions: '# Loop Decisions\n\n',
}

/** RFC 3339 to the second, UTC, as VT Code stamps entries. */
export function memoryStamp(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** The text as one trimmed line; '' when nothing is left. */
export function foldEntryText(text: string): string {
  // Line by line: `/\s*\r?\n\s*/g` is quadratic in a run of spaces without a line break.
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .join(' ')
}

/** The file after appending `text`; unchanged (same string) when the text is empty. */
export function appendEntry(
  kind: MemoryKind,
  current: string,
  text: string,
  epochMs: number,
): string {
  const line = foldEntryText(text)
  if (line === '') return current
  const head =
    current === '' ? MEMORY_HEADERS[kind] : current.endsWith('\n') ? current : `${current}\n`
  return `${head}- [${memoryStamp(epochMs)}] ${line}\n`
}

const ENTRY = /^- \[([^\]]+)\] (.*)$/

/** The entries of a notes or decisions file, oldest first; other lines are ignored. */
export function parseEntries(markdown: string): MemoryEntry[] {
  const entries: MemoryEntry[] = []
  for (const raw of markdown.split(/\r?\n/)) {
    const match = ENTRY.exec(raw.trim())
    if (match?.[1] !== undefined && match[2] !== undefined) {
      entries.push({ at: match[1], text: match[2] })
    }
  }
  return entries
}
