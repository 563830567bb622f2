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
