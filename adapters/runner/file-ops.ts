import { planPatch } from '../../src/contract/patch-apply.ts'
import { parsePatch } from '../../src/contract/patch-parser.ts'
import type {
  FileReadResult,
  FileWriteResult,
  PatchResult,
} from '../../src/contract/runner-answers.ts'
import type { FileReadBody } from '../../src/contract/runner-requests.ts'
import { Refusal } from './refusal.ts'
import { readRegular, removeRegular, replaceRegular } from './workspace-files.ts'
import { normalRel } from './workspace-paths.ts'
import type { Owner, WorkspaceDir } from './workspace-walk.ts'

/** Largest file read_file or apply_patch loads. */
const MAX_FILE_BYTES = 32 * 1024 * 1024

function loadText(ws: WorkspaceDir, rel: string): string | undefined {
  const bytes = readRegular(ws, rel, MAX_FILE_BYTES)
  if (bytes === undefined) return undefined
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new Refusal('invalid_input', `${normalRel(rel)} looks like a binary file`)
  }
  return bytes.toString('utf8')
}

export function readWorkspaceFile(ws: WorkspaceDir, body: FileReadBody): FileReadResult {
  const rel = normalRel(body.path)
  const text = loadText(ws, body.path)
  if (text === undefined) throw new Refusal('not_found', `no such file: ${rel}`)
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  const first = body.start_line - 1
  const picked: string[] = []
  let bytes = 0
  let cut = false
  for (let i = first; i < lines.length && picked.length < body.max_lines; i++) {
    const line = lines[i]!
    const size = Buffer.byteLength(line) + 1
    if (bytes + size > body.max_bytes) {
      if (picked.length === 0) {
        picked.push(Buffer.from(line).subarray(0, body.max_bytes).toString('utf8'))
      }
      cut = true
      break
    }
    picked.push(line)
    bytes += size
  }
  const end = first + picked.length
  return {
    path: rel,
    content: picked.length ? `${picked.join('\n')}\n` : '',
    size: Buffer.byteLength(text),
    start_line: body.start_line,
    end_line: end,
    total_lines: lines.length,
    truncated: cut || end < lines.length,
  }
}

/** `owner` receives what the runner creates (the sandbox user; absent when not root). */
export function writeWorkspaceFile(
  ws: WorkspaceDir,
  path: string,
  content: string,
  owner: Owner | undefined,
): FileWriteResult {
  const bytes = Buffer.from(content)
  const kind = replaceRegular(ws, path, bytes, owner)
  return { path: normalRel(path), kind, bytes: bytes.byteLength }
}

/** Parses, plans every resulting file, and only then writes: all or nothing. */
export async function applyWorkspacePatch(
  ws: WorkspaceDir,
  patch: string,
  owner: Owner | undefined,
): Promise<PatchResult> {
  const parsed = parsePatch(patch)
  if (!parsed.ok) throw new Refusal('invalid_input', `invalid patch: ${parsed.message}`)
  // Every path is checked before anything is read or written.
  for (const op of parsed.ops) {
    for (const rel of [op.path, ...(op.type === 'update' && op.moveTo ? [op.moveTo] : [])]) {
      normalRel(rel)
    }
  }
  const plan = await planPatch(parsed.ops, async (rel) => loadText(ws, rel))
  if (!plan.ok) throw new Refusal('patch_failed', plan.message)
  for (const write of plan.writes) {
    if ('delete' in write) removeRegular(ws, write.path)
    else replaceRegular(ws, write.path, Buffer.from(write.content), owner)
  }
  return { changes: plan.changes }
}
