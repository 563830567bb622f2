import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  mkdirSync,
  openSync,
  statSync,
} from 'node:fs'
import path from 'node:path'
import { checkWorkspaceName } from './workspace-paths.ts'
import { at, FOLDER_FLAGS, type Owner, type WorkspaceDir } from './workspace-walk.ts'

/** A workspace held open for one request; `close()` when the request is done. */
export interface OpenWorkspace extends WorkspaceDir {
  close(): void
}

/**
 * The runner's root folder, held open for the runner's life: every workspace
 * (`<root>/<tenant>/<session>`) is reached from this descriptor, never by its path.
 */
export class WorkspaceRoot {
  private constructor(
    readonly path: string,
    readonly fd: number,
    /** Set in project mode: the one folder every session works in (see `open`). */
    readonly project: string | undefined,
  ) {}

  /**
   * `root` is the real path of an existing folder (the operator's, not a tenant's). `project`
   * (the real path of an existing folder) is project mode, the `turnline` command's on a user's
   * own folder: every session's workspace is that folder, as it is — never created, chowned or
   * chmodded — while the runner's bookkeeping stays under `root`.
   */
  static open(root: string, project?: string): WorkspaceRoot {
    const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY)
    const held = fstatSync(fd)
    const seen = statSync(`/proc/self/fd/${fd}`, { throwIfNoEntry: false })
    if (seen?.ino !== held.ino || seen.dev !== held.dev) {
      closeSync(fd)
      throw new Error(
        'the runner reaches workspace files only through /proc/self/fd (a descriptor-relative ' +
          'walk), and /proc is not mounted here; mount /proc for the runner',
      )
    }
    return new WorkspaceRoot(root, fd, project)
  }

  /**
   * Opens (creating when new) `<root>/<tenant>/<session>`. With an `owner` (the runner is root):
   * the workspace is the owner's and 0700, the folders above it are reachable (o+x) but the
   * tenant folder is not listable by others — all through descriptors. In project mode: the
   * project folder, whoever asks (the runner then serves one user's own folder, not tenants).
   */
  open(tenant: string, session: string, owner?: Owner): OpenWorkspace {
    checkWorkspaceName(tenant)
    checkWorkspaceName(session)
    if (this.project !== undefined) return held(this.project, openSync(this.project, FOLDER_FLAGS))
    if (owner) reachable(this.fd)
    const tenantFd = openMade(this.fd, tenant, 0o711)
    let fd: number
    try {
      if (owner) reachable(tenantFd)
      fd = openMade(tenantFd, session, 0o700)
    } finally {
      closeSync(tenantFd)
    }
    try {
      if (owner) {
        const info = fstatSync(fd)
        if (info.uid !== owner.uid || info.gid !== owner.gid) fchownSync(fd, owner.uid, owner.gid)
        if ((info.mode & 0o7777) !== 0o700) fchmodSync(fd, 0o700)
      }
    } catch (error) {
      closeSync(fd)
      throw error
    }
    return held(path.join(this.path, tenant, session), fd)
  }

  close(): void {
    closeSync(this.fd)
  }
}

/** A workspace folder held by `fd` for one request. */
function held(folder: string, fd: number): OpenWorkspace {
  let open = true
  return {
    path: folder,
    get fd() {
      if (!open) throw new Error('a workspace descriptor was used after its request ended')
      return fd
    },
    close: () => {
      if (open) closeSync(fd)
      open = false
    },
  }
}

/** The folder `name` of a held folder, made with `mode` when missing; never through a symlink. */
function openMade(dir: number, name: string, mode: number): number {
  try {
    return openSync(at(dir, name), FOLDER_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  try {
    mkdirSync(at(dir, name), mode)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  }
  return openSync(at(dir, name), FOLDER_FLAGS)
}

/** The sandbox user must get through (not list) the folders above its workspace. */
function reachable(fd: number): void {
  const info = fstatSync(fd)
  if ((info.mode & 0o001) === 0) fchmodSync(fd, (info.mode & 0o7777) | 0o111)
}
