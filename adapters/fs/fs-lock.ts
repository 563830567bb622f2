/**
 * Per-key locks, safe across processes, through `proper-lockfile`: a lock is a directory created
 * with mkdir (atomic), whose mtime the holder refreshes while it holds it; a lock whose mtime is
 * older than `staleMs` belongs to a holder that died and is taken over. Holders keep a lock for
 * one read-compare-rename, i.e. milliseconds. Within one process, contenders for the same lock
 * queue in memory instead of polling the disk (proper-lockfile only retries on a timer).
 *
 * The lock folder is named by the caller, through the descriptor of the store's locks folder
 * (fs-work-folders.ts), and proper-lockfile is given `lstat` and `lutimes` for its `stat` and
 * `utimes`: nothing it does follows a link planted at a lock's name. Acquisition is retried here
 * (proper-lockfile is asked for one attempt at a time) so that a locks folder that is gone
 * (ENOENT) fails at once, for the caller to hold the folder again, instead of after `timeoutMs`.
 */
import fs from 'node:fs'
import lockfile from 'proper-lockfile'
import { TurnlineError } from '../../src/contract/errors.ts'
import { errnoOf } from './fs-key-path.ts'

export interface LockTimings {
  /** Give up acquiring after this long (→ 'storage_unavailable', retryable). */
  timeoutMs: number
  /** A lock not refreshed for this long is stale (its holder died) and may be taken over. */
  staleMs: number
}

export const DEFAULT_LOCK_TIMINGS: LockTimings = { timeoutMs: 10_000, staleMs: 30_000 }

const localQueues = new Map<string, Promise<unknown>>()

/**
 * What proper-lockfile may do to a lock: its own `fs`, with no call that follows a link. One
 * object for every lock (it caches the filesystem's mtime precision on it).
 */
const NO_FOLLOW_FS = { ...fs, stat: fs.lstat, utimes: fs.lutimes }

/** Backoff between attempts on a held lock: 1 ms doubling to 25 ms, randomised. */
const FIRST_DELAY_MS = 1
const MAX_DELAY_MS = 25

/**
 * Runs `fn` while holding the lock `lockPath` (a directory while held), made at `at` (the same
 * folder named another way, e.g. through a folder's descriptor; `lockPath` by default).
 */
export async function withFileLock<T>(
  lockPath: string,
  timings: LockTimings,
  fn: () => Promise<T>,
  at = lockPath,
): Promise<T> {
  const previous = localQueues.get(lockPath) ?? Promise.resolve()
  const run = previous.then(
    () => holdFileLock(lockPath, at, timings, fn),
    () => holdFileLock(lockPath, at, timings, fn),
  )
  const tail = run.catch(() => undefined)
  localQueues.set(lockPath, tail)
  try {
    return await run
  } finally {
    if (localQueues.get(lockPath) === tail) localQueues.delete(lockPath)
  }
}

async function holdFileLock<T>(
  lockPath: string,
  at: string,
  timings: LockTimings,
  fn: () => Promise<T>,
): Promise<T> {
  const release = await acquire(lockPath, at, timings)
  try {
    return await fn()
  } finally {
    await release().catch((error: unknown) => {
      if (errnoOf(error) !== 'ERELEASED') throw lockError('release', lockPath, error)
    })
  }
}

/** Takes the lock, retrying while someone else holds it, for up to `timeoutMs`. */
async function acquire(
  lockPath: string,
  at: string,
  timings: LockTimings,
): Promise<() => Promise<void>> {
  const started = Date.now()
  for (let delay = FIRST_DELAY_MS; ; delay = Math.min(delay * 2, MAX_DELAY_MS)) {
    try {
      return await lockfile.lock(at, {
        lockfilePath: at,
        // The lock names a key, not a file that must exist.
        realpath: false,
        stale: timings.staleMs,
        retries: 0,
        fs: NO_FOLLOW_FS,
        // A lock taken over while held (its refresh failed for staleMs) is someone else's now;
        // the holder's compare-and-rename has already run, so there is nothing to undo.
        onCompromised: () => {},
      })
    } catch (error) {
      if (errnoOf(error) !== 'ELOCKED') throw lockError('create', lockPath, error)
      if (Date.now() - started >= timings.timeoutMs) {
        throw new TurnlineError('storage_unavailable', 'Timed out waiting for an object lock', {
          details: { lockPath, timeoutMs: timings.timeoutMs, errno: errnoOf(error) },
          cause: error,
        })
      }
    }
    const wait = Math.min(delay * (1 + Math.random()), timings.timeoutMs)
    await new Promise((resolve) => setTimeout(resolve, wait))
  }
}

function lockError(action: string, lockPath: string, cause: unknown): TurnlineError {
  return new TurnlineError('storage_unavailable', `Could not ${action} lock file`, {
    details: { lockPath, action, errno: errnoOf(cause) },
    cause,
  })
}

/** Whether the lock could not be made because the folder it was to be made in is gone. */
export function lockFolderMissing(error: unknown): boolean {
  return (
    error instanceof TurnlineError &&
    error.details?.['action'] === 'create' &&
    error.details['errno'] === 'ENOENT'
  )
}
