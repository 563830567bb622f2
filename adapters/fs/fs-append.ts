/**
 * Appends of the fs store (`ObjectStore.append`): the bytes are written into the object's own
 * file, at `at`, by a writer thread (fs-writer-thread-source.ts) — no temp file, no lock, no new
 * name — and fsynced before the append returns. The thread checks the file's size and version
 * (inode and birth time: a put replaces the file, so the version changes; appends keep it) just
 * before writing; the check and the write are not atomic against another process, which the
 * port's contract leaves to callers (they write the same bytes at the same offset). A file the
 * append creates (`ifSize` 0, no file yet) gets its name made durable like a put's: its folder,
 * and any folder created for it, are fsynced.
 */
import { dirname } from 'node:path'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { AppendOptions, AppendResult } from '../../src/ports/object-store.ts'
import { syncNewName } from './fs-durability.ts'
import { storageError } from './fs-key-path.ts'
import { parentsAfter } from './fs-place.ts'
import { appendOnThread } from './fs-writer-threads.ts'

/** How often an append retries when a concurrent delete pruned its parent folder. */
const PARENT_RETRIES = 8

export async function appendToFile(
  path: string,
  key: string,
  bytes: Uint8Array,
  options: AppendOptions,
  durable: boolean,
): Promise<AppendResult> {
  let created: string | undefined
  for (let attempt = 0; attempt < PARENT_RETRIES; attempt++) {
    let reply: Awaited<ReturnType<typeof appendOnThread>>
    try {
      // A copy per attempt, moved to the thread: the caller's bytes stay as they are.
      reply = await appendOnThread({
        path,
        bytes: new Uint8Array(bytes),
        durable,
        at: options.at,
        ifSize: options.ifSize,
        ifVersion: options.ifVersion,
      })
    } catch (error) {
      created = (await parentsAfter(error, path, key, 'rename')) ?? created
      continue
    }
    if (reply.conflict) {
      throw new TurnlineError('conflict', 'Object changed since it was read', {
        logDetails: { key, size: reply.size, expected: options.ifSize },
      })
    }
    if (reply.created && durable) {
      await syncNewName(dirname(path), created).catch((error: unknown) => {
        throw storageError(error, 'sync', key)
      })
    }
    return { size: reply.size, version: reply.version }
  }
  throw new TurnlineError('storage_unavailable', 'Parent folder kept vanishing', {
    logDetails: { key },
  })
}
