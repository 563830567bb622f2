import { lstat, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import { Refusal } from './refusal.ts'

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

/** Refuses a tenant or session name that could not be one folder of the runner's root. */
export function checkWorkspaceName(part: string): void {
  if (!SEGMENT.test(part) || part.includes('..')) {
    throw new Refusal('invalid_input', `invalid workspace name ${JSON.stringify(part)}`)
  }
}

function outside(rel: string, why: string): Refusal {
  return new Refusal('path_escape', `path ${JSON.stringify(rel)} ${why}`, { path: rel })
}

/**
 * The components of a workspace-relative path, refusing what could never stay inside: absolute
 * paths and any ".." (symlinks are the walk's business: workspace-walk.ts). "." and empty
 * components are dropped, so "." (or "./") is the workspace itself: no components.
 */
export function workspaceSegments(rel: string): string[] {
  if (rel.includes('\0')) throw new Refusal('invalid_input', 'path contains a NUL byte')
  if (rel.trim() === '') throw new Refusal('invalid_input', 'path is empty')
  if (path.isAbsolute(rel) || rel.startsWith('\\') || /^[A-Za-z]:/.test(rel)) {
    throw outside(rel, 'is absolute; paths are relative to the workspace')
  }
  const segments = rel.split(/[/\\]+/).filter((s) => s !== '' && s !== '.')
  if (segments.includes('..')) throw outside(rel, 'contains ".." and would leave the workspace')
  return segments
}

/** The normal form of a workspace-relative path as answers show it ("." for the workspace). */
export function normalRel(rel: string): string {
  return workspaceSegments(rel).join('/') || '.'
}

/** A path inside a workspace: absolute on disk, and relative (with "/") for answers. */
export interface WorkspacePath {
  abs: string
  rel: string
}

function inside(workspace: string, candidate: string): boolean {
  return candidate === workspace || candidate.startsWith(workspace + path.sep)
}

/**
 * Resolves a workspace-relative path and proves it stays inside, by name (the file tools' check
 * until they walk descriptors too): the real path of the target or of its nearest existing
 * ancestor must lie within the workspace; a dangling symlink is refused.
 */
export async function resolveInside(workspace: string, rel: string): Promise<WorkspacePath> {
  const segments = workspaceSegments(rel)
  const normal = segments.join('/') || '.'
  const abs = path.join(workspace, ...segments)
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
