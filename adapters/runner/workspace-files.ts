import {
  closeSync,
  constants,
  fchownSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { Refusal } from './refusal.ts'
import { normalRel } from './workspace-paths.ts'
import {
  at,
  FOLDER_FLAGS,
  HeldFds,
  type Located,
  type LocateOptions,
  locate,
  type Owner,
  type WorkspaceDir,
} from './workspace-walk.ts'

/**
 * The runner's file operations in a workspace, all on descriptors from `locate`: the entry is
 * opened in its held folder with O_NOFOLLOW|O_NONBLOCK (a FIFO never blocks) and the open file
 * must be regular (fstat) before a byte is read or written; what the runner creates is handed to
 * the owner with fchown on its descriptor; removals unlink the name in its held folder.
 */

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
const UPDATE_FLAGS = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
const FOLLOW = { followLinks: true, makeFolders: false } as const

/** What the kernel says when a command changes a path while the runner uses it. */
const RACES = new Set(['ENOENT', 'ENOTDIR', 'EISDIR', 'ELOOP', 'EEXIST', 'ENOTEMPTY', 'ENXIO'])

const notRegular = (rel: string) =>
  new Refusal('invalid_input', `${normalRel(rel)} is not a regular file`, { path: rel })

/** Runs `use`; what the kernel says when a command changes the path meanwhile is a refusal. */
export function refusingRaces<T>(rel: string, use: () => T): T {
  try {
    return use()
  } catch (error) {
    if (error instanceof Refusal) throw error
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENAMETOOLONG') {
      throw new Refusal('invalid_input', `path ${JSON.stringify(rel)} is too long`, { path: rel })
    }
    if (code !== undefined && RACES.has(code)) {
      throw new Refusal(
        'conflict',
        `${normalRel(rel)} changed while the runner was using it (${code}); try again`,
        { path: rel },
      )
    }
    throw error
  }
}

/** Runs `use` with the descriptors it holds closed after; races become refusals. */
export function withHeld<T>(rel: string, use: (held: HeldFds) => T): T {
  const held = new HeldFds()
  try {
    return refusingRaces(rel, () => use(held))
  } finally {
    held.closeAll()
  }
}

/**
 * The bytes of a regular file, or undefined when there is none; over `maxBytes` is refused.
 * Symlinks on the way are followed within the workspace unless `walk` says otherwise.
 */
export function readRegular(
  ws: WorkspaceDir,
  rel: string,
  maxBytes: number,
  walk: LocateOptions = FOLLOW,
): Buffer | undefined {
  return withHeld(rel, (held) => {
    const place = locate(ws, rel, walk, held)
    if (place.name === '' || (place.info && !place.info.isFile())) throw notRegular(rel)
    if (!place.info) return undefined
    let fd: number
    try {
      fd = held.add(openSync(at(place.dir, place.name), READ_FLAGS))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ELOOP') throw changedIntoLink(rel)
      if (code === 'ENXIO') throw notRegular(rel)
      throw error
    }
    const info = fstatSync(fd)
    if (!info.isFile()) throw notRegular(rel)
    const tooLarge = (size: number) =>
      new Refusal('payload_too_large', `${normalRel(rel)} is ${size} bytes (limit ${maxBytes})`)
    if (info.size > maxBytes) throw tooLarge(info.size)
    const buffer = Buffer.alloc(Math.min(info.size + 1, maxBytes + 1))
    let got = 0
    for (let n = -1; n !== 0 && got < buffer.byteLength; got += n) {
      n = readSync(fd, buffer, got, buffer.byteLength - got, got)
    }
    if (got > maxBytes) throw tooLarge(got)
    return buffer.subarray(0, got)
  })
}

const changedIntoLink = (rel: string) =>
  new Refusal('path_escape', `path ${JSON.stringify(rel)} changed into a symlink; try again`, {
    path: rel,
  })

/** Writes `bytes` as the regular file `rel` (made with its folders); 'add' or 'update'. */
export function replaceRegular(
  ws: WorkspaceDir,
  rel: string,
  bytes: Buffer,
  owner: Owner | undefined,
): 'add' | 'update' {
  return withHeld(rel, (held) => {
    const place = locate(ws, rel, { followLinks: true, makeFolders: true, owner }, held)
    if (place.name === '' && normalRel(rel) === '.') {
      throw new Refusal('invalid_input', 'path names the workspace itself')
    }
    if (place.name === '' || (place.info && !place.info.isFile())) throw notRegular(rel)
    writeAt(place, rel, bytes, owner)
    return place.info ? 'update' : 'add'
  })
}

/**
 * Writes into the file found by the walk: a new one is created there (O_CREAT|O_EXCL|O_NOFOLLOW)
 * and handed to `owner`; an existing one is opened with O_NOFOLLOW|O_NONBLOCK (a symlink swapped
 * in meanwhile fails, a FIFO neither blocks nor passes the regular-file check on the descriptor),
 * written from offset 0 and cut to length — in place, as before, keeping its permissions.
 */
function writeAt(place: Located, rel: string, bytes: Buffer, owner: Owner | undefined): void {
  const target = at(place.dir, place.name)
  let fd: number
  try {
    fd = place.info ? openSync(target, UPDATE_FLAGS) : openSync(target, CREATE_FLAGS, 0o644)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') throw changedIntoLink(rel)
    if (code === 'ENXIO' || code === 'EISDIR') throw notRegular(rel)
    throw error
  }
  try {
    const info = fstatSync(fd)
    if (!info.isFile()) throw notRegular(rel)
    if (owner && (info.uid !== owner.uid || info.gid !== owner.gid)) {
      fchownSync(fd, owner.uid, owner.gid)
    }
    for (let done = 0; done < bytes.byteLength; ) {
      done += writeSync(fd, bytes, done, bytes.byteLength - done, done)
    }
    // Cut after writing, not O_TRUNC before: truncating to 0 makes ext4 flush on close.
    ftruncateSync(fd, bytes.byteLength)
  } finally {
    closeSync(fd)
  }
}

/** Removes the regular file `rel`; nothing when it does not exist. */
export function removeRegular(ws: WorkspaceDir, rel: string): void {
  withHeld(rel, (held) => {
    const place = locate(ws, rel, FOLLOW, held)
    if (place.name === '' || (place.info && !place.info.isFile())) throw notRegular(rel)
    if (!place.info) return
    try {
      unlinkSync(at(place.dir, place.name))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
  })
}

/** A working directory: held open (in `held`), and its path inside the workspace. */
export function openFolder(
  ws: WorkspaceDir,
  rel: string,
  held: HeldFds,
): { fd: number; resolved: string } | undefined {
  const place = locate(ws, rel, FOLLOW, held)
  if (place.name === '') return { fd: place.dir, resolved: place.resolved }
  if (!place.info?.isDirectory()) return undefined
  try {
    return {
      fd: held.add(openSync(at(place.dir, place.name), FOLDER_FLAGS)),
      resolved: place.resolved,
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return undefined
    throw error
  }
}
