/**
 * Per-key locks, safe across processes, through `proper-lockfile`: a lock is a directory created
 * with mkdir (atomic), whose mtime the holder refreshes while it holds it; a lock whose mtime is
 * older than `staleMs` belongs to a holder that died and is taken over. Holders keep a lock for
 * one read-compare-rename, i.e. milliseconds. Within one process, contenders for the same lock
 * queue in memory instead of polling the disk (proper-lockfile only retries on a timer).
 */
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

/** Runs `fn` while holding the lock at `lockPath` (a directory while held). */
export async function withFileLock<T>(
  lockPath: string,
  timings: LockTimings,
  fn: () => Promise<T>,
): Promise<T> {
  const previous = localQueues.get(lockPath) ?? Promise.resolve()
  const run = previous.then(
    () => holdFileLock(lockPath, timings, fn),
    () => holdFileLock(lockPath, timings, fn),
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
  timings: LockTimings,
  fn: () => Promise<T>,
): Promise<T> {
  let release: () => Promise<void>
  const started = Date.now()
  try {
    release = await lockfile.lock(lockPath, {
      lockfilePath: lockPath,
      // The lock names a key, not a file that must exist.
      realpath: false,
      stale: timings.staleMs,
      // Backoff 1 ms doubling to 25 ms, repeated until timeoutMs has passed.
      retries: {
        retries: 8,
        forever: true,
        factor: 2,
        minTimeout: 1,
        maxTimeout: 25,
        randomize: true,
        maxRetryTime: timings.timeoutMs,
      },
      // A lock taken over while held (its refresh failed for staleMs) is someone else's now;
      // the holder's compare-and-rename has already run, so there is nothing to undo.
      onCompromised: () => {},
    })
  } catch (error) {
    if (errnoOf(error) === 'ELOCKED' || Date.now() - started >= timings.timeoutMs) {
      throw new TurnlineError('storage_unavailable', 'Timed out waiting for an object lock', {
        details: { lockPath, timeoutMs: timings.timeoutMs, errno: errnoOf(error) },
        cause: error,
      })
    }
    throw lockError('create', lockPath, error)
  }
  try {
    return await fn()
  } finally {
    await release().catch((error: unknown) => {
      if (errnoOf(error) !== 'ERELEASED') throw lockError('release', lockPath, error)
    })
  }
}

function lockError(action: string, lockPath: string, cause: unknown): TurnlineError {
  return new TurnlineError('storage_unavailable', `Could not ${action} lock file`, {
    details: { lockPath, errno: errnoOf(cause) },
    cause,
  })
}
