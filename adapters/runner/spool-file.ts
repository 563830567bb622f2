import { closeSync, constants, fchownSync, fstatSync, openSync, readSync, writeSync } from 'node:fs'
import { Refusal } from './refusal.ts'
import type { OpenWorkspace } from './workspace-root.ts'
import { at, HeldFds, locate, type Owner, type WorkspaceDir } from './workspace-walk.ts'

/**
 * Which file a spool is, recorded at creation (decimal strings): device and inode, and its birth
 * time in nanoseconds — a freed inode number is soon handed out again, so a file a command made
 * after deleting the spool can have the same two; it is not born at the same instant. A record
 * without `btime` (or a filesystem without birth times, "0") compares device and inode only.
 */
export interface SpoolIdentity {
  dev: string
  ino: string
  btime?: string
}

const CREATE_FLAGS = constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW
const REOPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

function identityOf(fd: number): SpoolIdentity {
  const info = fstatSync(fd, { bigint: true })
  return { dev: String(info.dev), ino: String(info.ino), btime: String(info.birthtimeNs) }
}

/**
 * A command's output file (`.vtcode/context/tool_outputs/write_stdin_<id>.txt`). The runner
 * creates it through a descriptor-relative walk that follows no symlink, keeps the descriptor it
 * created it with, and writes and reads only through it (positional I/O), so whatever a command
 * does to the name — replace it with a symlink to `/proc/self/environ`, a FIFO, another file —
 * the runner reads the command's own bytes. Once the descriptor is released (the command was
 * forgotten, or it is known only from its record after a restart) each read walks to the file
 * afresh and checks it is still the very file (device and inode); a symlink on the way, a
 * non-regular file or another file is a refusal, never another file's bytes.
 */
export class SpoolFile {
  #fd: number | undefined

  private constructor(
    readonly rel: string,
    /** Absent for a record written before identities were kept (format 1). */
    readonly identity: SpoolIdentity | undefined,
    private readonly reach: () => OpenWorkspace,
    fd?: number,
  ) {
    this.#fd = fd
  }

  /** Creates the spool (and its folders, handed to `owner`); the descriptor stays open. */
  static create(
    ws: WorkspaceDir,
    rel: string,
    owner: Owner | undefined,
    reach: () => OpenWorkspace,
  ): SpoolFile {
    const held = new HeldFds()
    try {
      const place = spoolPlace(ws, rel, { makeFolders: true, owner }, held)
      if (place.info) throw new Refusal('conflict', `the output spool ${rel} exists already`)
      const fd = openSync(at(place.dir, place.name), CREATE_FLAGS, 0o600)
      try {
        if (owner) fchownSync(fd, owner.uid, owner.gid)
        return new SpoolFile(rel, identityOf(fd), reach, fd)
      } catch (error) {
        closeSync(fd)
        throw error
      }
    } finally {
      held.closeAll()
    }
  }

  /** A spool known from its record: nothing is open; every read verifies the file first. */
  static recorded(
    rel: string,
    identity: SpoolIdentity | undefined,
    reach: () => OpenWorkspace,
  ): SpoolFile {
    return new SpoolFile(rel, identity, reach)
  }

  /** Whether the creating descriptor is still held. */
  get held(): boolean {
    return this.#fd !== undefined
  }

  /** Appends at `position` (the output offset); only while the descriptor is held. */
  write(chunk: Buffer, position: number): void {
    const fd = this.#fd
    if (fd === undefined) throw new Error(`the output spool ${this.rel} is no longer held`)
    for (let done = 0; done < chunk.byteLength; ) {
      done += writeSync(fd, chunk, done, chunk.byteLength - done, position + done)
    }
  }

  /** Up to `size` bytes from `offset`. */
  read(offset: number, size: number): Buffer {
    return this.#with((fd) => {
      const buffer = Buffer.alloc(size)
      let got = 0
      while (got < size) {
        const n = readSync(fd, buffer, got, size - got, offset + got)
        if (n === 0) break
        got += n
      }
      return buffer.subarray(0, got)
    })
  }

  /** Its size on disk (for a command whose record has no output size: it was running). */
  size(): number {
    return this.#with((fd) => fstatSync(fd).size)
  }

  /** Closes the descriptor; later reads verify and reopen. */
  release(): void {
    if (this.#fd !== undefined) closeSync(this.#fd)
    this.#fd = undefined
  }

  #with<T>(use: (fd: number) => T): T {
    if (this.#fd !== undefined) return use(this.#fd)
    const ws = this.reach()
    const held = new HeldFds()
    try {
      return use(this.#reopen(ws, held))
    } finally {
      held.closeAll()
      ws.close()
    }
  }

  #reopen(ws: WorkspaceDir, held: HeldFds): number {
    const refuse = (code: 'conflict' | 'not_found', why: string) =>
      new Refusal(code, `the output spool ${this.rel} ${why}; its output is not available`, {
        spool_path: this.rel,
      })
    let place: ReturnType<typeof spoolPlace>
    try {
      place = spoolPlace(ws, this.rel, { makeFolders: false }, held)
    } catch (error) {
      if (!(error instanceof Refusal)) throw error
      throw new Refusal(error.code, `output spool: ${error.message}`, { spool_path: this.rel })
    }
    if (!place.info) throw refuse('not_found', 'no longer exists')
    if (!place.info.isFile()) throw refuse('conflict', 'was replaced by something else than a file')
    let fd: number
    try {
      fd = held.add(openSync(at(place.dir, place.name), REOPEN_FLAGS))
    } catch (error) {
      const why = (error as NodeJS.ErrnoException).code
      if (why === 'ENOENT') throw refuse('not_found', 'no longer exists')
      if (why === 'ELOOP') throw refuse('conflict', 'was replaced by a symlink')
      throw error
    }
    if (!fstatSync(fd).isFile())
      throw refuse('conflict', 'was replaced by something else than a file')
    const now = identityOf(fd)
    if (this.identity && !sameFile(this.identity, now)) {
      throw refuse('conflict', 'was replaced by another file')
    }
    return fd
  }
}

/** Where the spool goes: no symlink anywhere on the way (refused, even one pointing inside). */
function spoolPlace(
  ws: WorkspaceDir,
  rel: string,
  options: { makeFolders: boolean; owner?: Owner },
  held: HeldFds,
) {
  const place = locate(ws, rel, { followLinks: false, ...options }, held)
  if (place.name === '') throw new Refusal('conflict', `the output spool ${rel} is a folder`)
  return place
}

function sameFile(recorded: SpoolIdentity, now: SpoolIdentity): boolean {
  if (recorded.dev !== now.dev || recorded.ino !== now.ino) return false
  return recorded.btime === undefined || recorded.btime === now.btime
}
