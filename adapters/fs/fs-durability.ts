/** fsync helpers of the fs store (see fs-object-store.ts for what each write needs). */
import { dirname } from 'node:path'
import { type HeldFolder, holdFolder } from './fs-folder-handles.ts'
import { errnoOf } from './fs-key-path.ts'

/**
 * Errors that mean a folder cannot be fsynced here (a platform or filesystem without folder
 * fsync: EISDIR, EINVAL, …) or need not be (ENOENT: the folder was pruned, so the name made in it
 * was deleted). Any other failure (EIO, ENOSPC, EMFILE, …) means the name may not be durable and
 * is thrown.
 */
const CANNOT_SYNC_FOLDER = new Set([
  'ENOENT',
  'EISDIR',
  'EINVAL',
  'ENOTSUP',
  'EOPNOTSUPP',
  'EPERM',
  'EACCES',
  'EBADF',
])

/**
 * Makes a new name durable: fsyncs the folder it was made in (through the handle it was made
 * through; `ownSync`: that fsync made already, on a writer thread), and when folders were created
 * for it (the topmost being `created`), the parent of each of them too (each held without
 * following a link).
 */
export async function syncNewName(
  root: string,
  folder: HeldFolder,
  created: string | undefined,
  ownSync: Promise<void> = folder.sync(),
): Promise<void> {
  const work = [tolerant(ownSync)]
  if (created !== undefined) {
    for (let dir = folder.path; dir.startsWith(created) && dir !== root; ) {
      dir = dirname(dir)
      work.push(tolerant(syncHeld(root, dir)))
    }
  }
  await settleAll(work)
}

/** Waits for all of `work` to settle, then throws the first failure, if any. */
export async function settleAll(work: Promise<unknown>[]): Promise<void> {
  for (const outcome of await Promise.allSettled(work)) {
    if (outcome.status === 'rejected') throw outcome.reason
  }
}

async function tolerant(sync: Promise<void>): Promise<void> {
  await sync.catch((error: unknown) => {
    if (!CANNOT_SYNC_FOLDER.has(errnoOf(error) ?? '')) throw error
  })
}

async function syncHeld(root: string, dir: string): Promise<void> {
  // Exact: a link on the way (swapped in since the folder was made) is named, not "missing".
  const { folder } = await holdFolder(root, dir, { exact: true })
  try {
    await folder.sync()
  } finally {
    folder.release()
  }
}
