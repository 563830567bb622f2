/** fsync helpers of the fs store (see fs-object-store.ts for what each write needs). */
import { open } from 'node:fs/promises'
import { dirname } from 'node:path'
import { syncFolder } from './fs-folder-handles.ts'
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
 * Makes a new name in `dir` durable: fsyncs `dir` (through a kept handle, see
 * fs-folder-handles.ts), and when folders were created for it (the topmost being `created`), the
 * parent of each of them too.
 */
export async function syncNewName(dir: string, created: string | undefined): Promise<void> {
  const work = [tolerant(syncFolder(dir))]
  if (created !== undefined) {
    for (let folder = dir; folder.startsWith(created) && folder !== dirname(folder); ) {
      folder = dirname(folder)
      work.push(tolerant(syncDir(folder)))
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

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
