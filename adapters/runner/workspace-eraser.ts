import { type FileHandle, open, rename } from 'node:fs/promises'
import type { WorkspaceEraseResult } from '../../src/contract/runner-answers.ts'
import { STATE_FOLDER } from './exec-state-folder.ts'
import { FolderKeepsChanging, removeFolder } from './folder-removal.ts'
import { Refusal } from './refusal.ts'
import { checkWorkspaceName } from './workspace-paths.ts'
import type { WorkspaceRoot } from './workspace-root.ts'
import { at, FOLDER_FLAGS } from './workspace-walk.ts'

/** What has to stop before a workspace goes: its commands (exec-registry.ts). */
export interface WorkspaceCommands {
  /** Refuses new starts in the workspace and ends every command running there. */
  endAll(tenant: string, session: string): Promise<void>
  /** Starts are accepted again (the workspace is made anew by the next request). */
  reopen(tenant: string, session: string): void
}

/**
 * Erases workspaces (`eraseWorkspace`), one erase of a workspace at a time: a second request
 * for the same workspace waits for the first, then finds what it left (usually nothing).
 */
export class WorkspaceEraser {
  readonly #under = new Map<string, Promise<unknown>>()

  constructor(
    private readonly root: WorkspaceRoot,
    private readonly commands: WorkspaceCommands,
    /** The tenant's disk use changed (its quota is measured again). */
    private readonly erased: (tenant: string) => void,
  ) {}

  async erase(tenant: string, session: string): Promise<WorkspaceEraseResult> {
    const key = `${tenant}/${session}`
    const before = this.#under.get(key) ?? Promise.resolve()
    const run = before
      .catch(() => undefined)
      .then(() => eraseWorkspace(this.root, this.commands, tenant, session))
    this.#under.set(key, run)
    try {
      return await run
    } finally {
      if (this.#under.get(key) === run) this.#under.delete(key)
      this.erased(tenant)
    }
  }
}

/**
 * `<tenant>/.erase-<session>`: where a workspace is moved before it is removed. Workspace names
 * never start with ".", so no workspace is ever called so; a removal cut short (a crash) leaves
 * it there and the next erase of the session removes it first.
 */
const trashName = (session: string) => `.erase-${session}`

/**
 * `POST /v1/workspace/erase` of the reference runner: erases a session's workspace for good
 * (`docs/runner-protocol.md`, "Erasing a workspace"). The workspace is the tenant's, so it is
 * removed as every workspace file is reached: through held descriptors, no symlink followed.
 *
 * 1. New commands in the workspace are refused, and every command running there ends (its whole
 *    sandbox): nothing of the tenant acts on the folder from then on.
 * 2. The workspace folder is renamed, in its tenant's folder (the runner's, never the tenant's),
 *    to `.erase-<session>`: a request that comes meanwhile makes an empty workspace, never
 *    reaches what is being removed.
 * 3. That folder is removed through descriptors (folder-removal.ts), then the runner's own
 *    records of the workspace (`.runner-state/<tenant>/<session>`).
 *
 * Idempotent: erasing again answers `absent`; a leftover `.erase-<session>` is removed first. In
 * project mode the workspace is the user's own folder, which is never erased (`kept`).
 */
export async function eraseWorkspace(
  root: WorkspaceRoot,
  commands: WorkspaceCommands,
  tenant: string,
  session: string,
): Promise<WorkspaceEraseResult> {
  checkWorkspaceName(tenant)
  checkWorkspaceName(session)
  if (root.project !== undefined) {
    return { state: 'kept', reason: "project mode: the workspace is the user's own folder" }
  }
  await commands.endAll(tenant, session)
  try {
    let erased = false
    const tenantDir = await openFolderAt(root.fd, tenant)
    if (tenantDir) {
      try {
        erased = await removeWorkspace(tenantDir.fd, session)
      } finally {
        await tenantDir.close()
      }
    }
    if (await removeRecords(root.fd, tenant, session)) erased = true
    return { state: erased ? 'erased' : 'absent' }
  } catch (error) {
    if (error instanceof FolderKeepsChanging) {
      throw new Refusal('conflict', `the workspace kept changing while it was erased; try again`)
    }
    throw error
  } finally {
    commands.reopen(tenant, session)
  }
}

/** Moves the workspace to its trash name, then removes the trash (a leftover one first). */
async function removeWorkspace(tenantFd: number, session: string): Promise<boolean> {
  const trash = trashName(session)
  let erased = await removeFolder(tenantFd, trash)
  try {
    // rename(2) never follows either name; the tenant folder is the runner's alone.
    await rename(at(tenantFd, session), at(tenantFd, trash))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    return erased
  }
  erased = (await removeFolder(tenantFd, trash)) || erased
  return erased
}

/** `.runner-state/<tenant>/<session>`: request claims and command records. */
async function removeRecords(rootFd: number, tenant: string, session: string): Promise<boolean> {
  const state = await openFolderAt(rootFd, STATE_FOLDER)
  if (!state) return false
  try {
    const tenantState = await openFolderAt(state.fd, tenant)
    if (!tenantState) return false
    try {
      return await removeFolder(tenantState.fd, session)
    } finally {
      await tenantState.close()
    }
  } finally {
    await state.close()
  }
}

async function openFolderAt(dir: number, name: string): Promise<FileHandle | undefined> {
  try {
    return await open(at(dir, name), FOLDER_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
