import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { planPatch } from '../../src/contract/patch-apply.ts'
import { parsePatch } from '../../src/contract/patch-parser.ts'
import type {
  FileReadBody,
  FileReadResult,
  FileWriteResult,
  PatchResult,
} from '../../src/contract/runner-protocol.ts'
import { Refusal } from './refusal.ts'
import { resolveInside, type WorkspacePath } from './workspace-paths.ts'

/** Largest file read_file or apply_patch loads. */
const MAX_FILE_BYTES = 32 * 1024 * 1024

async function loadText(target: WorkspacePath): Promise<string | undefined> {
  const info = await stat(target.abs).catch(() => undefined)
  if (!info) return undefined
  if (!info.isFile()) throw new Refusal('invalid_input', `${target.rel} is not a regular file`)
  if (info.size > MAX_FILE_BYTES) {
    throw new Refusal(
      'payload_too_large',
      `${target.rel} is ${info.size} bytes (limit ${MAX_FILE_BYTES})`,
    )
  }
  const bytes = await readFile(target.abs)
  if (bytes.subarray(0, 8192).includes(0)) {
    throw new Refusal('invalid_input', `${target.rel} looks like a binary file`)
  }
  return bytes.toString('utf8')
}

export async function readWorkspaceFile(
  workspace: string,
  body: FileReadBody,
): Promise<FileReadResult> {
  const target = await resolveInside(workspace, body.path)
  const text = await loadText(target)
  if (text === undefined) throw new Refusal('not_found', `no such file: ${target.rel}`)
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
    path: target.rel,
    content: picked.length ? `${picked.join('\n')}\n` : '',
    size: Buffer.byteLength(text),
    start_line: body.start_line,
    end_line: end,
    total_lines: lines.length,
    truncated: cut || end < lines.length,
  }
}

/** Hands a path the runner wrote (and the folders it created for it) to the sandbox user. */
export type Adopt = (abs: string) => Promise<void>

async function put(target: WorkspacePath, content: string, adopt?: Adopt): Promise<void> {
  await mkdir(path.dirname(target.abs), { recursive: true })
  await writeFile(target.abs, content)
  await adopt?.(target.abs)
}

export async function writeWorkspaceFile(
  workspace: string,
  rel: string,
  content: string,
  adopt?: Adopt,
): Promise<FileWriteResult> {
  const target = await resolveInside(workspace, rel)
  if (target.rel === '.') throw new Refusal('invalid_input', 'path names the workspace itself')
  const info = await stat(target.abs).catch(() => undefined)
  if (info && !info.isFile())
    throw new Refusal('invalid_input', `${target.rel} is not a regular file`)
  await put(target, content, adopt)
  return { path: target.rel, kind: info ? 'update' : 'add', bytes: Buffer.byteLength(content) }
}

/** Parses, plans every resulting file, and only then writes: all or nothing. */
export async function applyWorkspacePatch(
  workspace: string,
  patch: string,
  adopt?: Adopt,
): Promise<PatchResult> {
  const parsed = parsePatch(patch)
  if (!parsed.ok) throw new Refusal('invalid_input', `invalid patch: ${parsed.message}`)
  const targets = new Map<string, WorkspacePath>()
  for (const op of parsed.ops) {
    for (const rel of [op.path, ...(op.type === 'update' && op.moveTo ? [op.moveTo] : [])]) {
      targets.set(rel, await resolveInside(workspace, rel))
    }
  }
  const plan = await planPatch(parsed.ops, (rel) => loadText(targets.get(rel)!))
  if (!plan.ok) throw new Refusal('patch_failed', plan.message)
  for (const write of plan.writes) {
    const target = targets.get(write.path)!
    if ('delete' in write) await rm(target.abs, { force: true })
    else await put(target, write.content, adopt)
  }
  return { changes: plan.changes }
}
