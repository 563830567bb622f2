import type { PatchChunk, PatchOp } from './patch-parser.ts'

/**
 * Applies parsed `apply_patch` operations. `planPatch` computes every resulting file first, over
 * an overlay of what earlier operations did, so a patch that fails anywhere writes nothing; the
 * caller then performs the returned writes and deletes.
 *
 * Hunks are located line by line, searching forward from the previous hunk: exactly, then
 * ignoring trailing whitespace, then ignoring surrounding whitespace, then with typographic
 * punctuation folded to ASCII. `*** End of File` hunks are tried at the end first. CRLF files keep
 * their line endings; every written file ends with a newline.
 */

/** A file an applied patch added, updated or deleted. */
export interface FileChange {
  path: string
  kind: 'add' | 'delete' | 'update'
}

export type FileWrite = { path: string; content: string } | { path: string; delete: true }

export type PatchPlan =
  | { ok: true; writes: FileWrite[]; changes: FileChange[] }
  | { ok: false; message: string }

export type ApplyChunks = { ok: true; content: string } | { ok: false; message: string }

/** Reads a file of the workspace; undefined when it does not exist. */
export type ReadWorkspaceFile = (path: string) => Promise<string | undefined>

export async function planPatch(
  ops: readonly PatchOp[],
  read: ReadWorkspaceFile,
): Promise<PatchPlan> {
  const overlay = new Map<string, string | null>()
  const current = async (path: string) =>
    overlay.has(path) ? (overlay.get(path) ?? undefined) : read(path)
  const changes: FileChange[] = []
  for (const op of ops) {
    const existing = await current(op.path)
    if (op.type === 'add') {
      overlay.set(op.path, op.contents)
      changes.push({ path: op.path, kind: existing === undefined ? 'add' : 'update' })
    } else if (op.type === 'delete') {
      if (existing === undefined) return fail(`cannot delete ${op.path}: no such file`)
      overlay.set(op.path, null)
      changes.push({ path: op.path, kind: 'delete' })
    } else {
      if (existing === undefined) return fail(`cannot update ${op.path}: no such file`)
      const applied = applyChunks(existing, op.chunks)
      if (!applied.ok) return fail(`cannot update ${op.path}: ${applied.message}`)
      if (op.moveTo && op.moveTo !== op.path) {
        const target = await current(op.moveTo)
        overlay.set(op.path, null)
        overlay.set(op.moveTo, applied.content)
        changes.push({ path: op.path, kind: 'delete' })
        changes.push({ path: op.moveTo, kind: target === undefined ? 'add' : 'update' })
      } else {
        overlay.set(op.path, applied.content)
        changes.push({ path: op.path, kind: 'update' })
      }
    }
  }
  const writes: FileWrite[] = []
  for (const [path, content] of overlay) {
    writes.push(content === null ? { path, delete: true } : { path, content })
  }
  return { ok: true, writes, changes }
}

function fail(message: string): PatchPlan {
  return { ok: false, message }
}

/** Applies the hunks of one update to a file's text. */
export function applyChunks(original: string, chunks: readonly PatchChunk[]): ApplyChunks {
  const crlf = original.includes('\r\n')
  const lines = (crlf ? original.replace(/\r\n/g, '\n') : original).split('\n')
  if (lines.at(-1) === '') lines.pop()
  const replacements: Array<{ start: number; remove: number; insert: string[] }> = []
  let from = 0
  for (const chunk of chunks) {
    if (chunk.context !== undefined) {
      const at = seek(lines, [chunk.context], from, false)
      if (at < 0) return { ok: false, message: `context line not found: ${quote(chunk.context)}` }
      from = at + 1
    }
    if (chunk.oldLines.length === 0) {
      const at = chunk.context !== undefined && !chunk.endOfFile ? from : lines.length
      replacements.push({ start: at, remove: 0, insert: chunk.newLines })
      continue
    }
    let old = chunk.oldLines
    let insert = chunk.newLines
    let at = seek(lines, old, from, chunk.endOfFile)
    if (at < 0 && old.at(-1) === '') {
      // A trailing empty context line often stands for the file's final newline.
      old = old.slice(0, -1)
      if (insert.at(-1) === '') insert = insert.slice(0, -1)
      at = seek(lines, old, from, chunk.endOfFile)
    }
    if (at < 0) {
      return {
        ok: false,
        message: `hunk does not match the file; expected these lines:\n${old.join('\n')}`,
      }
    }
    replacements.push({ start: at, remove: old.length, insert })
    from = at + old.length
  }
  const result = [...lines]
  for (const r of [...replacements].sort((a, b) => b.start - a.start)) {
    result.splice(r.start, r.remove, ...r.insert)
  }
  const text = result.length ? `${result.join('\n')}\n` : ''
  return { ok: true, content: crlf ? text.replace(/\n/g, '\r\n') : text }
}

const MATCHERS: ReadonlyArray<(s: string) => string> = [
  (s) => s,
  (s) => s.trimEnd(),
  (s) => s.trim(),
  (s) => fold(s.trim()),
]

/** Index where `pattern` occurs in `lines` at or after `from` (-1 when nowhere). */
function seek(lines: readonly string[], pattern: readonly string[], from: number, eof: boolean) {
  if (pattern.length > lines.length) return -1
  const last = lines.length - pattern.length
  for (const norm of MATCHERS) {
    const want = pattern.map(norm)
    const matches = (at: number) => want.every((line, i) => norm(lines[at + i]!) === line)
    if (eof && last >= from && matches(last)) return last
    for (let at = from; at <= last; at++) if (matches(at)) return at
  }
  return -1
}

function fold(s: string): string {
  return s
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, ' ')
}

function quote(line: string): string {
  return JSON.stringify(line)
}
