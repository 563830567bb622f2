import { constants, fstatSync, openSync, readSync } from 'node:fs'
import { inflateSync } from 'node:zlib'
import type { EventLoopPacer } from '../../src/shared/event-loop-pacer.ts'
import { applyDelta } from './git-delta.ts'
import { GitReadBudget, type GitReadCost } from './git-read-budget.ts'
import { GitUnreadable } from './git-unreadable.ts'
import { readRegular, withHeld } from './workspace-files.ts'
import { at, FOLDER_FLAGS, locate, type WorkspaceDir } from './workspace-walk.ts'

/**
 * Commit objects of a workspace's repository read from `.git/objects` by the runner itself (no
 * git process): loose objects and undeltified entries of version-2 pack indexes. Every file is
 * reached through workspace-walk.ts without following any symlink and opened O_NOFOLLOW, so a
 * tenant's `.git` can point the runner nowhere else. Anything else (a deltified entry, an index
 * of another version, a multi-pack index, a file too large, a reading past the bounds of
 * git-read-budget.ts) is `GitUnreadable`: the caller then asks git itself, in the sandbox.
 *
 * The reading is the runner's one thread's work, so it pauses (`slices`) between objects, index
 * searches and delta instructions, letting other tenants' requests in once it has run a slice.
 */

const NO_LINKS = { followLinks: false, makeFolders: false } as const
const MAX_INDEX_BYTES = 64 * 1024 * 1024
/** An object, a pack entry, a delta's result: real commits are a few KiB (see git-read-budget.ts). */
const MAX_COMMIT_BYTES = 1024 * 1024
const SHA = /^[0-9a-f]{40}$/
const MAX_DELTA_DEPTH = 64

/** A regular file of the workspace, without following any symlink; undefined when absent. */
export function gitFile(ws: WorkspaceDir, rel: string, maxBytes: number): Buffer | undefined {
  return readRegular(ws, rel, maxBytes, NO_LINKS)
}

/** Whether the workspace has an entry at `rel` (never following a symlink); its lstat. */
export function gitEntry(ws: WorkspaceDir, rel: string) {
  return withHeld(rel, (held) => locate(ws, rel, NO_LINKS, held).info)
}

/** The names in a workspace folder (none when it is absent), no symlink followed on the way. */
function folderNames(ws: WorkspaceDir, rel: string, budget: GitReadBudget): string[] {
  return withHeld(rel, (held) => {
    const place = locate(ws, rel, NO_LINKS, held)
    if (!place.info) return []
    if (!place.info.isDirectory()) throw new GitUnreadable(`${rel} is not a folder`)
    const fd = held.add(openSync(at(place.dir, place.name), FOLDER_FLAGS))
    const names = budget.names(`/proc/self/fd/${fd}`)
    if (names === undefined) throw new GitUnreadable(`${rel} holds too many names`)
    return names
  })
}

interface PackIndex {
  name: string
  count: number
  shas: Buffer
  offsets: (i: number) => number
}

function parseIndex(name: string, bytes: Buffer): PackIndex {
  if (bytes.readUInt32BE(0) !== 0xff744f63 || bytes.readUInt32BE(4) !== 2) {
    throw new GitUnreadable(`${name} is not a version-2 pack index`)
  }
  const count = bytes.readUInt32BE(8 + 255 * 4)
  const shasAt = 8 + 256 * 4
  const offsetsAt = shasAt + count * 24
  const largeAt = offsetsAt + count * 4
  if (bytes.length < largeAt + 40) throw new GitUnreadable(`${name} holds fewer than ${count}`)
  return {
    name,
    count,
    shas: bytes.subarray(shasAt, shasAt + count * 20),
    offsets: (i) => {
      const small = bytes.readUInt32BE(offsetsAt + i * 4)
      if (small < 0x80000000) return small
      return Number(bytes.readBigUInt64BE(largeAt + (small & 0x7fffffff) * 8))
    },
  }
}

export class GitObjects {
  readonly #packs: PackIndex[] = []
  readonly #loose = new Map<string, string[]>()
  readonly #budget = new GitReadBudget()

  private constructor(
    private readonly ws: WorkspaceDir,
    private readonly slices: EventLoopPacer,
  ) {}

  /** The repository's objects, its pack indexes loaded. */
  static async open(ws: WorkspaceDir, slices: EventLoopPacer): Promise<GitObjects> {
    const objects = new GitObjects(ws, slices)
    const names = folderNames(ws, '.git/objects/pack', objects.#budget)
    if (names.includes('multi-pack-index')) throw new GitUnreadable('a multi-pack index')
    for (const name of names.filter((n) => n.endsWith('.idx')).sort()) {
      await slices.tick()
      const bytes = gitFile(ws, `.git/objects/pack/${name}`, MAX_INDEX_BYTES)
      objects.#spend({ bytes: bytes?.length })
      if (bytes) objects.#packs.push(parseIndex(name, bytes))
    }
    return objects
  }

  /** Counts what this reading loads; past its bounds the reading is left to git. */
  #spend(cost: GitReadCost): void {
    const over = this.#budget.spend(cost)
    if (over !== undefined) throw new GitUnreadable(over)
  }

  /** First index in the sorted sha table whose sha is ≥ `prefix` (hex, any length). */
  async #lowerBound(index: PackIndex, prefix: string): Promise<number> {
    await this.slices.tick()
    this.#spend({ steps: Math.ceil(Math.log2(index.count + 1)) })
    let lo = 0
    let hi = index.count
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const sha = index.shas.toString('hex', mid * 20, mid * 20 + 20)
      if (sha < prefix) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  /** What git counts to size abbreviations: the objects in packs. */
  get packedCount(): number {
    return this.#packs.reduce((sum, p) => sum + p.count, 0)
  }

  /** The body of commit `sha`. */
  async commit(sha: string): Promise<string> {
    if (!SHA.test(sha)) throw new GitUnreadable(`not an object id: ${sha}`)
    await this.slices.tick()
    this.#spend({ objects: 1 })
    const loose = gitFile(
      this.ws,
      `.git/objects/${sha.slice(0, 2)}/${sha.slice(2)}`,
      MAX_COMMIT_BYTES,
    )
    const raw = loose ? inflated(loose) : await this.#packed(sha)
    this.#spend({ bytes: (loose?.length ?? 0) + raw.length })
    const nul = raw.indexOf(0)
    const header = raw.toString('latin1', 0, nul)
    if (!header.startsWith('commit ')) throw new GitUnreadable(`${sha} is not a commit`)
    return raw.toString('utf8', nul + 1)
  }

  /** Whether another object than `sha` starts with its first `length` hex digits. */
  async ambiguous(sha: string, length: number): Promise<boolean> {
    const prefix = sha.slice(0, length)
    const dir = sha.slice(0, 2)
    let names = this.#loose.get(dir)
    if (!names) {
      names = folderNames(this.ws, `.git/objects/${dir}`, this.#budget)
      this.#loose.set(dir, names)
    }
    const rest = prefix.slice(2)
    if (names.some((n) => n.startsWith(rest) && `${dir}${n}` !== sha)) return true
    // An index git wrote lists each object once, sorted: two entries from the prefix decide.
    for (const index of this.#packs) {
      for (let i = await this.#lowerBound(index, prefix), seen = false; i < index.count; i++) {
        const other = index.shas.toString('hex', i * 20, i * 20 + 20)
        if (!other.startsWith(prefix)) break
        if (other !== sha) return true
        if (seen) throw new GitUnreadable(`${index.name} lists ${sha} twice`)
        seen = true
      }
    }
    return false
  }

  async #packed(sha: string): Promise<Buffer> {
    const found = await this.#find(sha)
    if (!found) throw new GitUnreadable(`object ${sha} is in no pack this reader knows`)
    const object = await this.#object(found.pack, found.offset, 0)
    if (object.type !== 1) throw new GitUnreadable(`${sha} is not a commit`)
    return Buffer.concat([Buffer.from(`commit ${object.data.length}\0`, 'latin1'), object.data])
  }

  async #find(sha: string): Promise<{ pack: string; offset: number } | undefined> {
    for (const index of this.#packs) {
      const i = await this.#lowerBound(index, sha)
      if (i >= index.count || index.shas.toString('hex', i * 20, i * 20 + 20) !== sha) continue
      return { pack: index.name.replace(/\.idx$/, '.pack'), offset: index.offsets(i) }
    }
    return undefined
  }

  /** The object at `offset` of a pack, its deltas applied (types: 1 commit, 2 tree, 3 blob, 4 tag). */
  async #object(pack: string, offset: number, depth: number): Promise<PackObject> {
    if (depth > MAX_DELTA_DEPTH)
      throw new GitUnreadable(`a delta chain deeper than ${MAX_DELTA_DEPTH}`)
    await this.slices.tick()
    const entry = this.#entry(pack, offset)
    if (entry.type >= 1 && entry.type <= 4) return entry
    const base =
      entry.type === 6
        ? await this.#object(pack, offset - (entry.baseOffset ?? 0), depth + 1)
        : await this.#byId(entry.baseId ?? '', depth + 1)
    await this.slices.tick()
    const data = await applyDelta(base.data, entry.data, MAX_COMMIT_BYTES, this.slices)
    this.#spend({ bytes: data.length })
    return { type: base.type, data }
  }

  async #byId(sha: string, depth: number): Promise<PackObject> {
    const found = await this.#find(sha)
    if (!found) throw new GitUnreadable(`delta base ${sha} is in no pack`)
    return this.#object(found.pack, found.offset, depth)
  }

  /** One pack entry: its type, its inflated bytes, and where a delta's base is. */
  #entry(pack: string, offset: number): RawEntry {
    const rel = `.git/objects/pack/${pack}`
    return withHeld(rel, (held) => {
      const place = locate(this.ws, rel, NO_LINKS, held)
      if (!place.info?.isFile()) throw new GitUnreadable(`${rel} is missing`)
      const flags = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
      const fd = held.add(openSync(at(place.dir, place.name), flags))
      if (!fstatSync(fd).isFile()) throw new GitUnreadable(`${rel} is not a regular file`)
      const head = Buffer.alloc(64)
      readSync(fd, head, 0, head.length, offset)
      let byte = head[0] ?? 0
      const type = (byte >> 4) & 7
      let size = byte & 15
      let shift = 4
      let used = 1
      while (byte & 0x80) {
        byte = head[used++] ?? 0
        size += (byte & 0x7f) * 2 ** shift
        shift += 7
      }
      if (type === 0 || type === 5) throw new GitUnreadable(`pack entry type ${type}`)
      if (size > MAX_COMMIT_BYTES) throw new GitUnreadable(`a pack entry of ${size} bytes`)
      this.#spend({ objects: 1, bytes: size })
      const entry: Omit<RawEntry, 'data'> = { type }
      if (type === 6) {
        byte = head[used++] ?? 0
        let back = byte & 0x7f
        while (byte & 0x80) {
          byte = head[used++] ?? 0
          back = (back + 1) * 128 + (byte & 0x7f)
        }
        entry.baseOffset = back
      } else if (type === 7) {
        entry.baseId = head.toString('hex', used, used + 20)
        used += 20
      }
      // Deflate adds at most 5 bytes per 16 KiB block and a few of its own.
      const data = Buffer.alloc(size + 64 + Math.ceil(size / 16384) * 5)
      const got = readSync(fd, data, 0, data.length, offset + used)
      const body = inflateSync(data.subarray(0, got), { maxOutputLength: size + 1 })
      if (body.length !== size) throw new GitUnreadable(`a pack entry inflated to another size`)
      return { ...entry, data: body }
    })
  }
}

interface PackObject {
  type: number
  data: Buffer
}

interface RawEntry {
  type: number
  data: Buffer
  baseOffset?: number
  baseId?: string
}

function inflated(bytes: Buffer): Buffer {
  return inflateSync(bytes, { maxOutputLength: MAX_COMMIT_BYTES + 64 })
}
