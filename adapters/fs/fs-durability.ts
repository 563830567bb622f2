/** fsync helpers of the fs store (see fs-object-store.ts for what each write needs). */
import { open } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * Makes a new name in `dir` durable: fsyncs `dir`, and when folders were created for it (the
 * topmost being `created`), the parent of each of them too. Best effort, as before: a platform
 * that cannot fsync a folder (EISDIR, EINVAL) is not an error.
 */
export async function syncNewName(dir: string, created: string | undefined): Promise<void> {
  const folders = [dir]
  if (created !== undefined) {
    for (let folder = dir; folder.startsWith(created) && folder !== dirname(folder); ) {
      folder = dirname(folder)
      folders.push(folder)
    }
  }
  await Promise.all(folders.map((folder) => syncDir(folder).catch(() => undefined)))
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}
