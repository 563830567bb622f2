import { lstat, mkdir, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import type { CommandSandbox } from './command-sandbox.ts'
import { Refusal } from './refusal.ts'

/** A path inside a workspace: absolute on disk, and relative (with "/") for answers. */
export interface WorkspacePath {
  abs: string
  rel: string
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

/**
 * Creates (if needed) and returns the real path of `<root>/<tenant>/<session>`, owned by the
 * sandbox user.
 */
export async function workspaceDir(
  root: string,
  tenant: string,
  sessionId: string,
  sandbox?: CommandSandbox,
) {
  for (const part of [tenant, sessionId]) {
    if (!SEGMENT.test(part) || part.includes('..')) {
      throw new Refusal('invalid_input', `invalid workspace name ${JSON.stringify(part)}`)
    }
  }
  const dir = path.join(root, tenant, sessionId)
  await mkdir(dir, { recursive: true })
  const real = await realpath(dir)
  await sandbox?.prepareWorkspace(root, real)
  return real
}

function inside(workspace: string, candidate: string): boolean {
  return candidate === workspace || candidate.startsWith(workspace + path.sep)
}

function outside(rel: string, why: string): Refusal {
  return new Refusal('path_escape', `path ${JSON.stringify(rel)} ${why}`, { path: rel })
}

/**
 * Resolves a workspace-relative path and proves it stays inside: no absolute paths, no "..",
 * and the real path of the target (or, when it does not exist yet, of its nearest existing
 * ancestor) must lie within the workspace, so a symlink pointing outside is refused. A dangling
 * symlink is refused too: writing through it could create a file anywhere.
 */
export async function resolveInside(workspace: string, rel: string): Promise<WorkspacePath> {
  if (rel.includes('\0')) throw new Refusal('invalid_input', 'path contains a NUL byte')
  if (rel.trim() === '') throw new Refusal('invalid_input', 'path is empty')
  if (path.isAbsolute(rel) || rel.startsWith('\\') || /^[A-Za-z]:/.test(rel)) {
    throw outside(rel, 'is absolute; paths are relative to the workspace')
  }
  const segments = rel.split(/[/\\]+/).filter((s) => s !== '' && s !== '.')
  if (segments.includes('..')) throw outside(rel, 'contains ".." and would leave the workspace')
  const normal = segments.join('/') || '.'
  const abs = path.join(workspace, ...segments)

  // Walk up to the nearest entry that exists; everything below it will be created by us.
  let probe = abs
  for (;;) {
    const info = await lstat(probe).catch(() => undefined)
    if (info) {
      let real: string
      try {
        real = await realpath(probe)
      } catch {
        const target = info.isSymbolicLink() ? await readlink(probe).catch(() => '?') : '?'
        throw outside(rel, `goes through a dangling symlink (${target})`)
      }
      if (!inside(workspace, real)) throw outside(rel, 'resolves outside the workspace (symlink)')
      return { abs: probe === abs ? real : path.join(real, path.relative(probe, abs)), rel: normal }
    }
    const parent = path.dirname(probe)
    if (parent === probe || !inside(workspace, parent)) {
      throw outside(rel, 'resolves outside the workspace')
    }
    probe = parent
  }
}

/** The workspace-relative form of a path already proven inside. */
export function relativeTo(workspace: string, abs: string): string {
  return path.relative(workspace, abs).split(path.sep).join('/') || '.'
}
