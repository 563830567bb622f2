/**
 * Open handles on the fs store's folders, each reached without following a symbolic link
 * (fs-no-follow.ts), and kept open: every object the store reads, makes, replaces or removes is
 * named through the descriptor of its folder (`/proc/self/fd/<fd>/<name>`), so no link planted on
 * the way after the folder was opened is followed either, and making a name durable costs one
 * fsync on the handle the name was made through. Shared by every store in the process and
 * bounded (least recently used handles are closed), so descriptors stay few.
 *
 * A kept handle can outlive its folder: a delete prunes an empty folder, another process may
 * remove one and make a new one at the same path. A name made through the old handle then fails
 * (ENOENT: nothing can be made in a removed folder), and a read finds nothing there; the caller
 * asks `stale()` (the handle's folder is removed, or the path names another folder now), drops
 * the handle with `discard()` and opens the folder again. A handle is closed only once nobody
 * holds it; a dropped handle is never handed out again.
 *
 * Without descriptor paths (not Linux) nothing is kept: each use opens the folder afresh, checked
 * component by component, and names objects by path.
 */
import type { BigIntStats } from 'node:fs'
import { type FileHandle, lstat, open } from 'node:fs/promises'
import { join } from 'node:path'
import { errnoOf } from './fs-key-path.ts'
import {
  descriptorPaths,
  FOLDER_FLAGS,
  openFolder,
  SymlinkInStore,
  throughDescriptor,
} from './fs-no-follow.ts'

/** Most folder handles kept open per process. */
export const MAX_FOLDER_HANDLES = 32

interface Entry {
  handle: FileHandle
  users: number
  /** Dropped: not handed out again, closed once nobody holds it. */
  evicted: boolean
}

/** A folder held open by one operation: release it (or discard it) exactly once. */
export interface HeldFolder {
  /** The folder's path (under the store's real root). */
  readonly path: string
  /** `name` in this folder, as a path the kernel looks up from the held descriptor. */
  child(name: string): string
  /** The held descriptor (open until released): for a writer thread to fsync the folder. */
  readonly fd: number
  sync(): Promise<void>
  /** True when the folder was removed, or the path names another folder, since it was opened. */
  stale(): Promise<boolean>
  release(): void
  /** Releases it and drops the kept handle (it is stale). */
  discard(): void
}

/** Path → kept handle, least recently used first. */
const entries = new Map<string, Entry>()
let syncsHere = 0

/**
 * Holds the folder `dir` (the real root or below it), opening it without following a link if no
 * handle is kept; with `create`, missing folders are made (`created`: the topmost one made).
 * Rejects as `openFolder` does.
 */
export async function holdFolder(
  root: string,
  dir: string,
  options: { create?: boolean; fresh?: boolean; exact?: boolean } = {},
): Promise<{ folder: HeldFolder; created: string | undefined }> {
  const create = options.create === true
  const paths = descriptorPaths()
  const throughFd = typeof paths === 'boolean' ? paths : await paths
  // A fresh hold is not kept, but names its objects through its descriptor all the same.
  const keep = throughFd && options.fresh !== true
  const kept = keep ? entries.get(dir) : undefined
  if (kept !== undefined && !kept.evicted) {
    entries.delete(dir)
    entries.set(dir, kept)
    kept.users++
    return { folder: held(dir, kept, true), created: undefined }
  }
  const { handle, created } = await openFolder(root, dir, create, options.exact ?? create)
  const entry: Entry = { handle, users: 1, evicted: true }
  if (keep && !entries.has(dir)) {
    entry.evicted = false
    entries.set(dir, entry)
    const oldest = entries.keys().next().value
    if (entries.size > MAX_FOLDER_HANDLES && oldest !== undefined) forgetFolder(oldest)
  }
  return { folder: held(dir, entry, throughFd), created }
}

/**
 * Holds the folder `name` inside `parent`, opened through the parent's descriptor (never kept:
 * for walks over many folders). Rejects with SymlinkInStore when it is a link, with ENOENT or
 * ENOTDIR when it is missing or not a folder.
 */
export async function holdChild(parent: HeldFolder, name: string): Promise<HeldFolder> {
  const dir = join(parent.path, name)
  if (!(await descriptorPaths())) return (await openFolderByPath(dir)).folder
  try {
    const handle = await open(parent.child(name), FOLDER_FLAGS)
    return held(dir, { handle, users: 1, evicted: true }, true)
  } catch (error) {
    if (errnoOf(error) === 'ELOOP') throw new SymlinkInStore(dir)
    throw error
  }

  async function openFolderByPath(path: string) {
    const info = await lstat(path)
    if (info.isSymbolicLink()) throw new SymlinkInStore(path)
    const handle = await open(path, FOLDER_FLAGS)
    return { folder: held(path, { handle, users: 1, evicted: true }, false) }
  }
}

/** Drops the handle kept for `dir`, if any (its folder was removed). */
export function forgetFolder(dir: string): void {
  const entry = entries.get(dir)
  if (entry !== undefined) evict(dir, entry)
}

/** Device and inode of the folder the handle kept for `dir` has open (for tests). */
export async function cachedFolderIdentity(
  dir: string,
): Promise<{ dev: bigint; ino: bigint } | undefined> {
  const entry = entries.get(dir)
  if (entry === undefined) return undefined
  const info = await entry.handle.stat({ bigint: true })
  return { dev: info.dev, ino: info.ino }
}

/** Folder fsyncs made through held handles on this thread (tests add the writer threads'). */
export function folderFsyncsHere(): number {
  return syncsHere
}

/** Number of folder handles kept open (for tests). */
export function cachedFolderCount(): number {
  return entries.size
}

function held(dir: string, entry: Entry, throughFd: boolean): HeldFolder {
  let done = false
  const release = () => {
    if (done) return
    done = true
    entry.users--
    if (entry.evicted && entry.users === 0) close(entry)
  }
  return {
    path: dir,
    child: (name) => (throughFd ? throughDescriptor(entry.handle, name) : join(dir, name)),
    fd: entry.handle.fd,
    async sync() {
      await entry.handle.sync()
      syncsHere++
    },
    async stale() {
      const [mine, now] = await Promise.all([
        entry.handle.stat({ bigint: true }),
        lstat(dir, { bigint: true }).catch(() => undefined),
      ])
      return mine.nlink === 0n || now === undefined || !sameFolder(now, mine)
    },
    release,
    discard() {
      evict(dir, entry)
      release()
    },
  }
}

function sameFolder(now: BigIntStats, mine: BigIntStats): boolean {
  return now.isDirectory() && now.dev === mine.dev && now.ino === mine.ino
}

function evict(dir: string, entry: Entry): void {
  if (entries.get(dir) === entry) entries.delete(dir)
  if (entry.evicted) return
  entry.evicted = true
  if (entry.users === 0) close(entry)
}

function close(entry: Entry): void {
  // A read-only folder handle whose fsyncs have all completed holds nothing to lose: a failure
  // to close it can only leak the descriptor.
  entry.handle.close().catch(() => undefined)
}
