import type { PatchChunk, PatchOp } from './patch-parser.ts'
import { LineFinder, SearchBudgetExceeded, searchBudget } from './patch-seek.ts'

/**
 * Applies parsed `apply_patch` operations. `planPatch` computes every resulting file first, over
 * an overlay of what earlier operations did, so a patch that fails anywhere writes nothing; the
 * caller then performs the returned writes and deletes.
 *
 * Hunks are located line by line, searching forward from the previous hunk: exactly, then
 * ignoring trailing whitespace, then ignoring surrounding whitespace, then with typographic
 * punctuation folded to ASCII (patch-seek.ts: linear per search, a step budget per patch).
 * `*** End of File` hunks are tried at the end first. CRLF files keep their line endings; every
 * written file ends with a newline.
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

/** Applies the hunks of one update to a file's text. Linear in the file and the hunks. */
export function applyChunks(original: string, chunks: readonly PatchChunk[]): ApplyChunks {
  const crlf = original.includes('\r\n')
  const lines = (crlf ? original.replace(/\r\n/g, '\n') : original).split('\n')
  if (lines.at(-1) === '') lines.pop()
  let hunkLines = 0
  for (const chunk of chunks) hunkLines += chunk.oldLines.length + 1
  const finder = new LineFinder(lines, searchBudget(lines.length, hunkLines))
  try {
    const replacements = locate(lines, chunks, finder)
    if (!replacements.ok) return replacements
    const text = rebuild(lines, replacements.found)
    return { ok: true, content: crlf ? text.replace(/\n/g, '\r\n') : text }
  } catch (error) {
    if (!(error instanceof SearchBudgetExceeded)) throw error
    return {
      ok: false,
      message:
        `locating ${chunks.length} hunks in ${lines.length} lines took too many steps ` +
        '(hunks that match only loosely are searched for again and again): ' +
        'apply it as smaller patches, or give each hunk exact context lines',
    }
  }
}

interface Replacement {
  start: number
  remove: number
  insert: readonly string[]
}

function locate(
  lines: readonly string[],
  chunks: readonly PatchChunk[],
  finder: LineFinder,
): { ok: true; found: Replacement[] } | { ok: false; message: string } {
  const found: Replacement[] = []
  let from = 0
  for (const chunk of chunks) {
    if (chunk.context !== undefined) {
      const at = finder.seek([chunk.context], from, false)
      if (at < 0) return { ok: false, message: `context line not found: ${quote(chunk.context)}` }
      from = at + 1
    }
    if (chunk.oldLines.length === 0) {
      const at = chunk.context !== undefined && !chunk.endOfFile ? from : lines.length
      found.push({ start: at, remove: 0, insert: chunk.newLines })
      continue
    }
    let old = chunk.oldLines
    let insert = chunk.newLines
    let at = finder.seek(old, from, chunk.endOfFile)
    if (at < 0 && old.at(-1) === '') {
      // A trailing empty context line often stands for the file's final newline.
      old = old.slice(0, -1)
      if (insert.at(-1) === '') insert = insert.slice(0, -1)
      at = finder.seek(old, from, chunk.endOfFile)
    }
    if (at < 0) {
      return {
        ok: false,
        message: `hunk does not match the file; expected these lines:\n${old.join('\n')}`,
      }
    }
    found.push({ start: at, remove: old.length, insert })
    from = at + old.length
  }
  return { ok: true, found }
}

/**
 * The file with the replacements made, in one pass (a splice per hunk is file × hunks). They do
 * not overlap: each hunk is found after the previous one, and an insertion without context goes
 * to the end. Replacements at the same line apply in the patch's order.
 */
function rebuild(lines: readonly string[], replacements: readonly Replacement[]): string {
  const order = replacements.map((r, i) => ({ r, i }))
  order.sort((a, b) => a.r.start - b.r.start || a.i - b.i)
  const out: string[] = []
  let at = 0
  for (const { r } of order) {
    for (; at < r.start; at++) out.push(lines[at] as string)
    for (const line of r.insert) out.push(line)
    at = Math.max(at, r.start + r.remove)
  }
  for (; at < lines.length; at++) out.push(lines[at] as string)
  return out.length ? `${out.join('\n')}\n` : ''
}

function quote(line: string): string {
  return JSON.stringify(line)
}
