import type { Stats } from 'node:fs'
import {
  closeSync,
  constants,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
} from 'node:fs'
import { Refusal } from './refusal.ts'
import { workspaceSegments } from './workspace-paths.ts'

/** Who owns what the runner creates in a workspace (the sandbox user), when it runs as root. */
export interface Owner {
  uid: number
  gid: number
}

/**
 * `name` inside the folder held open as `dirFd`. The kernel reaches `/proc/self/fd/<n>` through
 * the descriptor itself (a magic link to the open folder, never a lookup by its name), then looks
 * `name` up in that folder only: with O_NOFOLLOW (or lstat, mkdir, rename, unlink, which never
 * follow a last component) this is openat(dirFd, name) — Node has no openat.
 */
export const at = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`

export const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/** Descriptors opened for one operation, closed together (the workspace's own is not among them). */
export class HeldFds {
  readonly #fds: number[] = []

  add(fd: number): number {
    this.#fds.push(fd)
    return fd
  }

  closeAll(): void {
    for (const fd of this.#fds.splice(0)) closeSync(fd)
  }
}

/** A workspace folder held open for one request: `fd` is only valid until the request ends. */
export interface WorkspaceDir {
  fd: number
  /** Its real path on the host (and inside the sandbox, where it is mounted at the same place). */
  path: string
}

export interface LocateOptions {
  /** Follow symlinks whose target stays inside the workspace (else any symlink is refused). */
  followLinks: boolean
  /** Create missing folders on the way (owned by `owner`); else a missing one ends the walk. */
  makeFolders: boolean
  owner?: Owner
}

/** Where a workspace path leads: an entry `name` of the held folder `dir`, or `dir` itself. */
export interface Located {
  dir: number
  /** '' when the path names the held folder itself (".", or a symlink to a folder above). */
  name: string
  /**
   * lstat of the entry (never a symlink: those are followed or refused); absent: it does not
   * exist (nor, without `makeFolders`, perhaps a folder on the way: then `name` is that folder's).
   */
  info: Stats | undefined
  /** The workspace-relative path after following symlinks, "." for the workspace itself. */
  resolved: string
}

const MAX_LINKS = 40
/** Folders held at once by one walk: a bound on its descriptors, far beyond real trees. */
const MAX_DEPTH = 256

interface Step {
  name: string
  /** Came from a symlink's target: if it is missing, the symlink dangles. */
  fromLink: boolean
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code

function lstatAt(dir: number, name: string): Stats | undefined {
  try {
    return lstatSync(at(dir, name))
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined
    throw error
  }
}

/**
 * Walks a workspace-relative path one component at a time from the held workspace folder:
 * every folder on the way is opened with O_DIRECTORY|O_NOFOLLOW relative to the one before it
 * and held, so no component is ever looked up by a name a command could still swap (a folder
 * renamed or exchanged with a symlink after it was opened keeps pointing where the runner is).
 * Symlinks are read (readlink, relative to the held folder) and followed by this walk itself:
 * ".." steps back along the held folders and may not leave the workspace, an absolute target
 * must lie in the workspace's path; anything else is `path_escape`. Descriptors go to `held`.
 */
export function locate(
  ws: WorkspaceDir,
  rel: string,
  options: LocateOptions,
  held: HeldFds,
): Located {
  const leaves = (why: string) =>
    new Refusal('path_escape', `path ${JSON.stringify(rel)} ${why}`, { path: rel })
  const pending: Step[] = workspaceSegments(rel).map((name) => ({ name, fromLink: false }))
  let stack = [{ fd: ws.fd, name: '' }]
  let links = 0
  let retries = 0
  const resolved = (name?: string) =>
    [...stack.slice(1).map((s) => s.name), ...(name ? [name] : [])].join('/') || '.'
  const follow = (dir: number, step: Step) => {
    if (!options.followLinks) throw leaves(`goes through a symlink (${resolved(step.name)})`)
    if (++links > MAX_LINKS) throw leaves('goes through too many symlinks')
    let target: string
    try {
      target = readlinkSync(at(dir, step.name))
    } catch (error) {
      // No longer a symlink (EINVAL) or gone (ENOENT): changed under us; look at it again.
      if (code(error) !== 'EINVAL' && code(error) !== 'ENOENT') throw error
      pending.unshift(step)
      return
    }
    if (target.startsWith('/')) {
      if (target !== ws.path && !target.startsWith(`${ws.path}/`)) {
        throw leaves('resolves outside the workspace (symlink)')
      }
      stack = stack.slice(0, 1)
      target = target.slice(ws.path.length)
    }
    const parts = target.split('/').filter((s) => s !== '' && s !== '.')
    pending.unshift(...parts.map((name) => ({ name, fromLink: true })))
  }
  while (pending.length > 0) {
    const step = pending.shift() as Step
    if (step.name === '..') {
      // Only a symlink's target has "..": the user's own paths were refused with them.
      if (stack.length === 1) throw leaves('resolves outside the workspace (symlink)')
      stack.pop()
      continue
    }
    const dir = (stack.at(-1) as { fd: number }).fd
    if (pending.length === 0) {
      const info = lstatAt(dir, step.name)
      if (info?.isSymbolicLink()) {
        follow(dir, step)
        continue
      }
      if (!info && step.fromLink) throw leaves('goes through a dangling symlink')
      return { dir, name: step.name, info, resolved: resolved(step.name) }
    }
    let fd: number
    try {
      fd = openSync(at(dir, step.name), FOLDER_FLAGS)
    } catch (error) {
      const why = code(error)
      if (why !== 'ENOENT' && why !== 'ENOTDIR' && why !== 'ELOOP') throw error
      const info = lstatAt(dir, step.name)
      if (info?.isSymbolicLink()) {
        follow(dir, step)
        continue
      }
      if (info && !info.isDirectory()) {
        throw new Refusal('invalid_input', `${resolved(step.name)} is not a folder`, { path: rel })
      }
      if (!info && step.fromLink) throw leaves('goes through a dangling symlink')
      if (!info && !options.makeFolders) {
        // A folder on the way is missing, so is the entry: absent (nothing was created).
        const rest = pending.map((s) => s.name).join('/')
        return { dir, name: step.name, info: undefined, resolved: `${resolved(step.name)}/${rest}` }
      }
      if (!info) makeFolder(dir, step.name, options.owner)
      // Made now, or changed under us: look again (a bounded number of times).
      if (++retries > MAX_LINKS + MAX_DEPTH)
        throw leaves('keeps changing while the runner walks it')
      pending.unshift(step)
      continue
    }
    stack.push({ fd: held.add(fd), name: step.name })
    if (stack.length > MAX_DEPTH) {
      throw new Refusal(
        'invalid_input',
        `path ${JSON.stringify(rel)} goes more than ${MAX_DEPTH} folders deep`,
        { path: rel },
      )
    }
  }
  const top = stack.at(-1) as { fd: number }
  return { dir: top.fd, name: '', info: undefined, resolved: resolved() }
}

/** mkdir in a held folder, then the new folder handed to `owner` through its own descriptor. */
function makeFolder(dir: number, name: string, owner: Owner | undefined): void {
  try {
    mkdirSync(at(dir, name), 0o755)
  } catch (error) {
    if (code(error) === 'EEXIST') return
    throw error
  }
  if (!owner) return
  let fd: number
  try {
    fd = openSync(at(dir, name), FOLDER_FLAGS)
  } catch {
    return // replaced already: whatever is there now is not ours to hand over
  }
  try {
    fchownSync(fd, owner.uid, owner.gid)
  } finally {
    closeSync(fd)
  }
}
