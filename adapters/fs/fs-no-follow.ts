/**
 * Reaching the fs store's folders without following a symbolic link in any component below the
 * root (invariant 9 of DESIGN §5: no process with the server's rights resolves a path someone else
 * could have planted a link in). Node has no `openat`; on Linux `/proc/self/fd/<fd>/<name>` is
 * the same lookup: the kernel starts at the folder the descriptor has open, whatever its path
 * names now, and `O_NOFOLLOW` keeps the last component from being a link.
 *
 * - A folder is opened `O_DIRECTORY | O_NOFOLLOW` by its path, then checked: the path the kernel
 *   reports for the descriptor (`readlink /proc/self/fd/<fd>`) must be exactly the expected one
 *   under the real root, which it is not when any component on the way was a link. Two calls, and
 *   only when the folder is not kept open already (fs-folder-handles.ts).
 * - When that check fails, the folder is reached one component at a time from the root, each
 *   opened through its parent's descriptor with `O_NOFOLLOW`: a link is found and named, never
 *   followed. A missing folder to be made is reached the same way from the nearest folder above
 *   it that opens and checks, and made there with `mkdir` (which never follows a link either).
 * - Where `/proc/self/fd` cannot stand in for the descriptor calls (not Linux), each component is
 *   checked with `lstat` before the folder is opened by path: links are refused the same way, but
 *   one swapped in between the check and the use would be followed. Production runs on Linux.
 */
import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readlink } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { errnoOf } from './fs-key-path.ts'

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } = constants
/** How often a name that keeps changing between a walk's open and its check is looked at again. */
const NAME_CHANGES = 8

/** How a folder is opened: read-only (for fsync), never through a link at its own name. */
export const FOLDER_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW

/**
 * How an object file is opened for reading: never through a link, never blocking on a FIFO,
 * never becoming a controlling terminal (a file that is not a regular file is not an object).
 */
export const FILE_READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY

/** A symbolic link where the store expects a folder or an object of its own: never followed. */
export class SymlinkInStore extends Error {
  override readonly name = 'SymlinkInStore'
  readonly code = 'ELOOP'
  constructor(readonly at: string) {
    super(`a symbolic link in the store at ${at}`)
  }
}

let probed: Promise<boolean> | undefined
/** The probe's answer once known (saves an await on every operation). */
let known: boolean | undefined

/** Whether `/proc/self/fd/<fd>` names the descriptor's folder here (probed once: Linux). */
export function descriptorPaths(): boolean | Promise<boolean> {
  if (known !== undefined) return known
  probed ??= (async () => {
    const handle = await open('/', FOLDER_FLAGS).catch(() => undefined)
    if (handle === undefined) return false
    try {
      return (await readlink(`/proc/self/fd/${handle.fd}`).catch(() => '')) === '/'
    } finally {
      await handle.close()
    }
  })().then((answer) => {
    if (probed !== undefined) known = answer
    return answer
  })
  return probed
}

/**
 * For tests: `false` makes the store check folders by path (what it does where `/proc/self/fd`
 * is missing); `undefined` probes again.
 */
export function forceDescriptorPaths(available: boolean | undefined): void {
  known = available
  probed = available === undefined ? undefined : Promise.resolve(available)
}

/** `name` inside the folder open as `handle`, looked up from the descriptor. */
export function throughDescriptor(handle: FileHandle, name: string): string {
  return `/proc/self/fd/${handle.fd}/${name}`
}

/**
 * Opens the folder `dir` (the real root or a folder below it) without following a link; with
 * `create`, makes the missing folders on the way. Returns the handle and the topmost folder it
 * made, if any. Rejects with SymlinkInStore for a link on the way (without `exact`, a link that
 * leads nowhere may read as missing), with the errno error of a component that is missing
 * (ENOENT, without `create`) or not a folder (ENOTDIR).
 */
export async function openFolder(
  root: string,
  dir: string,
  create: boolean,
  /** A missing folder is told apart from a link on the way (a delete refuses the link). */
  exact = create,
): Promise<{ handle: FileHandle; created: string | undefined }> {
  if (!(await descriptorPaths())) return await checkByPath(root, dir, create)
  const found = await openChecked(dir)
  if (found.handle !== undefined) return { handle: found.handle, created: undefined }
  if (found.errno === 'ELOOP') throw new SymlinkInStore(dir)
  // For a read a folder that is missing (or not a folder) is simply not there, whether a link on
  // the way led nowhere or not; nothing behind a link was opened.
  if (!exact && (found.errno === 'ENOENT' || found.errno === 'ENOTDIR')) throw found.error
  // To make it: start at the nearest folder above it that opens and checks, if any.
  let from = { handle: undefined as FileHandle | undefined, path: root }
  if (create && found.errno === 'ENOENT') {
    for (let above = dirname(dir); above.startsWith(`${root}${sep}`); above = dirname(above)) {
      const ancestor = await openChecked(above)
      if (ancestor.handle !== undefined) {
        from = { handle: ancestor.handle, path: above }
        break
      }
      if (ancestor.errno !== 'ENOENT') break
    }
  }
  return await walkDown(from.handle ?? (await open(root, FOLDER_FLAGS)), from.path, dir, create)
}

/**
 * `dir` opened by path (`O_NOFOLLOW` at its own name) and checked: the handle when the path the
 * kernel reports for it is `dir` exactly (no link on the way), else the open's errno (none when
 * the check failed).
 */
async function openChecked(
  dir: string,
): Promise<{ handle?: FileHandle; errno?: string | undefined; error?: unknown }> {
  let handle: FileHandle
  try {
    handle = await open(dir, FOLDER_FLAGS)
  } catch (error) {
    return { errno: errnoOf(error), error }
  }
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => '')
  if (real === dir) return { handle }
  await handle.close()
  return {}
}

/** From the open folder `start` (at `from`) down to `dir`, each through its parent's descriptor. */
async function walkDown(
  start: FileHandle,
  from: string,
  dir: string,
  create: boolean,
): Promise<{ handle: FileHandle; created: string | undefined }> {
  let current: FileHandle | undefined = start
  let created: string | undefined
  let path = from
  try {
    for (const part of componentsBelow(from, dir)) {
      path = join(path, part)
      const next = await openChild(current, part, path, create)
      created ??= next.made ? path : undefined
      await current.close()
      current = next.handle
    }
    const opened = current
    current = undefined
    return { handle: opened, created }
  } finally {
    await current?.close()
  }
}

async function openChild(
  parent: FileHandle,
  part: string,
  path: string,
  create: boolean,
): Promise<{ handle: FileHandle; made: boolean }> {
  const child = throughDescriptor(parent, part)
  let made = false
  for (let changed = 0; ; ) {
    try {
      return { handle: await open(child, FOLDER_FLAGS), made }
    } catch (error) {
      const errno = errnoOf(error)
      if (errno === 'ELOOP') throw new SymlinkInStore(path)
      if (errno === 'ENOTDIR') {
        // A link at the name can fail so too (O_DIRECTORY); a folder there now means the name
        // changed in between: looked at again, a few times, then taken for the link it keeps
        // turning into.
        const now = await lstat(child).catch(() => undefined)
        if (now?.isSymbolicLink()) throw new SymlinkInStore(path)
        if (now?.isDirectory()) {
          if (++changed > NAME_CHANGES) throw new SymlinkInStore(path)
          continue
        }
      }
      if (errno !== 'ENOENT' || !create || made) throw error
    }
    await mkdir(child).catch((error: unknown) => {
      if (errnoOf(error) !== 'EEXIST') throw error
    })
    made = true
  }
}

/** Without descriptor paths: every component checked with lstat, then the folder opened. */
async function checkByPath(
  root: string,
  dir: string,
  create: boolean,
): Promise<{ handle: FileHandle; created: string | undefined }> {
  let path = root
  let created: string | undefined
  for (const part of componentsBelow(root, dir)) {
    path = join(path, part)
    const info = await lstat(path).catch((error: unknown) => {
      if (errnoOf(error) !== 'ENOENT' || !create) throw error
      return undefined
    })
    if (info?.isSymbolicLink()) throw new SymlinkInStore(path)
    if (info === undefined) {
      await mkdir(path).catch((error: unknown) => {
        if (errnoOf(error) !== 'EEXIST') throw error
      })
      created ??= path
    } else if (!info.isDirectory()) {
      throw Object.assign(new Error(`not a folder: ${path}`), { code: 'ENOTDIR' })
    }
  }
  return { handle: await open(dir, FOLDER_FLAGS), created }
}

function componentsBelow(root: string, dir: string): string[] {
  const rest = relative(root, dir)
  if (rest === '') return []
  if (rest.startsWith('..')) throw new Error(`${dir} is not below ${root}`)
  return rest.split(sep)
}
