/**
 * Key → file path mapping for the fs ObjectStore, and the errno → TurnlineError translation.
 * A key maps verbatim to `<root>/<key>`, so a store's folder reads like the bucket it stands
 * for. Keys that could escape the root, alias another key, or collide with the store's own
 * working folder are rejected with 'invalid_input'.
 */
import { join } from 'node:path'
import { TurnlineError } from '../../src/contract/errors.ts'
import { STORE_ROOT_FOLDERS } from '../../src/contract/store-root-folders.ts'
import { refusedByRuntime } from '../shared/runtime-permission.ts'

/** Working folder at the root (temp files and lock files); never a key. */
export const WORK_DIR = STORE_ROOT_FOLDERS.fsWork

function invalidKey(key: string, reason: string): TurnlineError {
  return new TurnlineError('invalid_input', `Invalid object key (${reason})`, {
    details: { reason },
    logDetails: { key },
  })
}

/** Validates `key` and returns its file path under `root`. */
export function keyPath(root: string, key: string): string {
  if (key.length === 0) throw invalidKey(key, 'empty')
  if (key.startsWith('/')) throw invalidKey(key, 'absolute')
  if (key.includes('\\')) throw invalidKey(key, 'backslash')
  if (key.includes('\0')) throw invalidKey(key, 'NUL character')
  if (key.includes('//')) throw invalidKey(key, 'empty segment')
  if (key.endsWith('/')) throw invalidKey(key, 'trailing slash')
  const segments = key.split('/')
  if (segments.some((segment) => segment === '..' || segment === '.')) {
    throw invalidKey(key, 'dot segment')
  }
  if (segments[0] === WORK_DIR) throw invalidKey(key, 'reserved folder')
  return rootPrefix(root) + key
}

/**
 * What `join(root, key)` puts before a key that passed the checks above (no empty, `.` or `..`
 * segment, so joining only normalizes the root's part): the root normalized, with its separator.
 * Kept per root (a process has a few), so that a key's path is one concatenation instead of
 * `join`'s normalizing walk over the whole path on every object operation.
 */
const prefixes = new Map<string, string>()

function rootPrefix(root: string): string {
  let prefix = prefixes.get(root)
  if (prefix === undefined) {
    prefix = join(root, 'k').slice(0, -1)
    if (prefixes.size >= 64) prefixes.clear()
    prefixes.set(root, prefix)
  }
  return prefix
}

/**
 * The folder a listing starts in: the part of `prefix` up to its last '/'. Returns undefined when
 * no valid key can start with `prefix` (so the listing is empty without touching the disk).
 */
export function listingBase(
  root: string,
  prefix: string,
): { dirKey: string; path: string } | undefined {
  const dirKey = prefix.slice(0, prefix.lastIndexOf('/') + 1)
  if (dirKey === '') return { dirKey, path: root }
  try {
    return { dirKey, path: keyPath(root, dirKey.slice(0, -1)) }
  } catch {
    return undefined
  }
}

export function errnoOf(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined
  const code = (error as { code: unknown }).code
  return typeof code === 'string' ? code : undefined
}

/** Translates a filesystem fault into a TurnlineError. */
export function storageError(error: unknown, action: string, key: string): TurnlineError {
  const refused = refusedByRuntime('storage_unavailable', `Filesystem ${action}`, error)
  if (refused) return refused
  const errno = errnoOf(error)
  if (errno === 'ENAMETOOLONG') {
    return new TurnlineError('invalid_input', 'Object key too long for the filesystem', {
      logDetails: { key },
      cause: error,
    })
  }
  return new TurnlineError(
    'storage_unavailable',
    `Filesystem ${action} failed (${errno ?? 'error'})`,
    {
      details: { action, errno },
      logDetails: { key },
      cause: error,
    },
  )
}

/** A key cannot be stored because a folder or an object is in the way. */
export function collisionError(
  key: string,
  what: 'folder' | 'object',
  cause?: unknown,
): TurnlineError {
  const message =
    what === 'folder'
      ? 'Object key names a folder of other keys'
      : 'A parent of this key is itself an object'
  return new TurnlineError('invalid_input', message, { logDetails: { key }, cause })
}
