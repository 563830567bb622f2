/**
 * Per-key lock files, safe across processes. A lock is a file created with O_EXCL ('wx') that
 * records its owner (pid, host, random token). Holders keep it for one read-compare-rename, i.e.
 * milliseconds. A lock counts as stale when it is older than `staleMs` and its owner process on
 * this host is gone, or older than `abandonMs` whatever the owner. Breaking a stale lock happens
 * under a second O_EXCL "breaker" file and re-checks the owner token, so two breakers can never
 * both delete a fresh lock. Within one process, contenders for the same lock queue in memory
 * instead of polling the disk.
 */
import { randomUUID } from 'node:crypto'
import { open, readFile, stat, unlink } from 'node:fs/promises'
import { hostname } from 'node:os'
import { TurnlineError } from '../../src/contract/errors.ts'
import { errnoOf } from './fs-key-path.ts'

export interface LockTimings {
  /** Give up acquiring after this long (→ 'storage_unavailable', retryable). */
  timeoutMs: number
  /** A lock this old whose owner process is dead may be broken. */
  staleMs: number
  /** A lock this old may be broken even if its owner looks alive (pid reuse, other host). */
  abandonMs: number
}

export const DEFAULT_LOCK_TIMINGS: LockTimings = {
  timeoutMs: 10_000,
  staleMs: 30_000,
  abandonMs: 120_000,
}

/** A breaker file older than this is itself abandoned (breaking takes microseconds). */
const BREAKER_ABANDON_MS = 10_000

interface LockOwner {
  pid: number
  host: string
  token: string
  at: number
}

const localQueues = new Map<string, Promise<unknown>>()

/** Runs `fn` while holding the lock file at `lockPath`. */
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
  const token = await acquire(lockPath, timings)
  try {
    return await fn()
  } finally {
    await release(lockPath, token)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

async function acquire(lockPath: string, timings: LockTimings): Promise<string> {
  const owner: LockOwner = { pid: process.pid, host: hostname(), token: randomUUID(), at: 0 }
  const deadline = Date.now() + timings.timeoutMs
  let delay = 1
  for (;;) {
    owner.at = Date.now()
    try {
      const handle = await open(lockPath, 'wx')
      try {
        await handle.writeFile(JSON.stringify(owner))
      } finally {
        await handle.close()
      }
      return owner.token
    } catch (error) {
      if (errnoOf(error) !== 'EEXIST') throw lockError('create', lockPath, error)
    }
    if (await breakIfStale(lockPath, timings)) continue
    if (Date.now() >= deadline) {
      throw new TurnlineError('storage_unavailable', 'Timed out waiting for an object lock', {
        details: { lockPath, timeoutMs: timings.timeoutMs },
      })
    }
    await sleep(delay + Math.random() * delay)
    delay = Math.min(delay * 2, 25)
  }
}

async function release(lockPath: string, token: string): Promise<void> {
  const owner = await readOwner(lockPath)
  // If the lock was broken as stale while we held it, it is someone else's now: leave it.
  if (owner?.token !== token) return
  await unlink(lockPath).catch((error: unknown) => {
    if (errnoOf(error) !== 'ENOENT') throw lockError('release', lockPath, error)
  })
}

async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    const parsed: unknown = JSON.parse(await readFile(lockPath, 'utf8'))
    if (typeof parsed !== 'object' || parsed === null) return undefined
    const { pid, host, token, at } = parsed as Record<string, unknown>
    if (typeof pid !== 'number' || typeof host !== 'string' || typeof token !== 'string') {
      return undefined
    }
    return { pid, host, token, at: typeof at === 'number' ? at : 0 }
  } catch {
    // Missing, or caught between create and write: treat as unknown owner.
    return undefined
  }
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return errnoOf(error) === 'EPERM'
  }
}

/** Removes the lock if it is stale; true when the caller should retry at once. */
async function breakIfStale(lockPath: string, timings: LockTimings): Promise<boolean> {
  const seen = await inspect(lockPath)
  if (seen === undefined) return true
  const age = Date.now() - seen.mtimeMs
  if (age < timings.staleMs) return false
  const owner = await readOwner(lockPath)
  const ownerGone = owner !== undefined && owner.host === hostname() && !processIsAlive(owner.pid)
  if (!ownerGone && age < timings.abandonMs) return false

  const breaker = `${lockPath}.break`
  try {
    await (await open(breaker, 'wx')).close()
  } catch (error) {
    if (errnoOf(error) !== 'EEXIST') throw lockError('break', lockPath, error)
    const held = await inspect(breaker)
    if (held !== undefined && Date.now() - held.mtimeMs > BREAKER_ABANDON_MS) {
      await unlink(breaker).catch(() => undefined)
    }
    return false
  }
  try {
    // Only the very file judged stale may go: same inode, same mtime, same owner.
    const now = await inspect(lockPath)
    const same = now?.ino === seen.ino && now.mtimeMs === seen.mtimeMs
    if (same && (await readOwner(lockPath))?.token === owner?.token) {
      await unlink(lockPath).catch((error: unknown) => {
        if (errnoOf(error) !== 'ENOENT') throw lockError('break', lockPath, error)
      })
    }
  } finally {
    await unlink(breaker).catch(() => undefined)
  }
  return true
}

async function inspect(path: string): Promise<{ ino: number; mtimeMs: number } | undefined> {
  try {
    const { ino, mtimeMs } = await stat(path)
    return { ino, mtimeMs }
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return undefined
    throw lockError('inspect', path, error)
  }
}

function lockError(action: string, lockPath: string, cause: unknown): TurnlineError {
  return new TurnlineError('storage_unavailable', `Could not ${action} lock file`, {
    details: { lockPath, errno: errnoOf(cause) },
    cause,
  })
}
