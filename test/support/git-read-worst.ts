import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cp, link, mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { deflateSync } from 'node:zlib'

/**
 * `.git` contents written straight into a workspace, as a tenant's command could: loose commits,
 * pack indexes and entries as git lays them out, and the most expensive repositories a tenant
 * can make for the runner's direct reading within its bounds (adapters/runner/git-read-budget.ts
 * and the bound on one object; each stops at one of them: the answer is 'unknown', after the
 * work). For the contract tests and bench/git-read-stall.ts.
 */

export const HEADER =
  'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\ncommitter t <t@t> 1700000000 +0000\n\n'

/** A loose commit object `sha` (whatever its bytes hash to: the reader takes the name). */
export async function looseCommit(git: string, sha: string, body: string): Promise<string> {
  await mkdir(join(git, 'objects', sha.slice(0, 2)), { recursive: true })
  const file = join(git, 'objects', sha.slice(0, 2), sha.slice(2))
  await writeFile(file, deflateSync(`commit ${Buffer.byteLength(body)}\0${body}`))
  return file
}

/** A version-2 pack index listing `entries` as they are (sorted by the caller); crc32s and
 * checksums zero (the reader never reads them). */
export function packIndex(entries: { sha: string; offset: number }[]): Buffer {
  const fanout = Buffer.alloc(256 * 4)
  for (const { sha } of entries) {
    for (let byte = Number.parseInt(sha.slice(0, 2), 16); byte < 256; byte++) {
      fanout.writeUInt32BE(fanout.readUInt32BE(byte * 4) + 1, byte * 4)
    }
  }
  const offsets = Buffer.alloc(entries.length * 4)
  for (const [i, { offset }] of entries.entries()) offsets.writeUInt32BE(offset, i * 4)
  return Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]),
    fanout,
    ...entries.map(({ sha }) => Buffer.from(sha, 'hex')),
    Buffer.alloc(entries.length * 4),
    offsets,
    Buffer.alloc(40),
  ])
}

/** A pack entry's type and size, as git writes them before its deflated bytes. */
export function entryHeader(type: number, size: number): Buffer {
  const bytes = [(type << 4) | (size & 15) | (size > 15 ? 0x80 : 0)]
  for (let rest = size >>> 4; rest > 0; rest >>>= 7) {
    bytes.push((rest & 0x7f) | (rest > 0x7f ? 0x80 : 0))
  }
  return Buffer.from(bytes)
}

const varint = (value: number) => {
  const bytes: number[] = []
  for (let rest = value; ; rest = Math.floor(rest / 128)) {
    bytes.push((rest & 0x7f) | (rest >= 128 ? 0x80 : 0))
    if (rest < 128) return Buffer.from(bytes)
  }
}

const ids = (n: number) => Array.from({ length: n }, () => randomBytes(20).toString('hex')).sort()

async function setHead(git: string, head: string) {
  await writeFile(join(git, 'HEAD'), `${head}\n`)
}

async function initGit(git: string) {
  await mkdir(join(git, 'objects/pack'), { recursive: true })
  await mkdir(join(git, 'refs/heads'), { recursive: true })
}

/**
 * Loose commits that inflate to the most an object may have (`objectBytes`), a message of blank
 * lines that the subject search walks: a HEAD naming enough of them to pass the bound on bytes
 * (one file hard-linked under every name).
 */
export async function looseBytes(git: string, objectBytes: number): Promise<void> {
  await initGit(git)
  const parents = ids(Math.ceil((130 * 1024 * 1024) / objectBytes))
  const body = `${HEADER}${' \n'.repeat((objectBytes - HEADER.length - 64) / 2)}x\n`
  const file = await looseCommit(git, parents[0] as string, body)
  for (const sha of parents.slice(1)) {
    await mkdir(join(git, 'objects', sha.slice(0, 2)), { recursive: true })
    await link(file, join(git, 'objects', sha.slice(0, 2), sha.slice(2)))
  }
  const head = 'f'.repeat(40)
  await looseCommit(git, head, `${parents.map((p) => `parent ${p}\n`).join('')}${HEADER}top\n`)
  await setHead(git, head)
}

/**
 * A chain of offset deltas, each an entry of the most an object may have (`objectBytes`) of
 * one-byte copies (a step of the reader's delta loop per 2 bytes), as deep as the bound on bytes
 * lets it be applied in full (at most the reader's 64).
 */
export async function deltaChain(git: string, objectBytes: number): Promise<void> {
  await initGit(git)
  const size = Math.floor((objectBytes - 16) / 2)
  const depth = Math.min(64, Math.floor((128 * 1024 * 1024) / (objectBytes + size)))
  const base = Buffer.alloc(size, 'x')
  base.write(HEADER, 'latin1')
  const copies = Buffer.alloc(size * 2)
  for (let i = 0; i < size; i++) {
    copies[i * 2] = 0x90
    copies[i * 2 + 1] = 1
  }
  const delta = deflateSync(Buffer.concat([varint(size), varint(size), copies]))
  const deltaSize = varint(size).length * 2 + copies.length
  const parts: Buffer[] = [Buffer.from('PACK\0\0\0\x02\0\0\0\x00', 'latin1')]
  let at = 12
  const push = (bytes: Buffer) => {
    parts.push(bytes)
    at += bytes.length
  }
  let previous = at
  push(Buffer.concat([entryHeader(1, size), deflateSync(base)]))
  for (let i = 0; i < depth; i++) {
    const here = at
    push(Buffer.concat([entryHeader(6, deltaSize), varint6(here - previous), delta]))
    previous = here
  }
  push(Buffer.alloc(20))
  const head = 'f'.repeat(40)
  await writeFile(join(git, 'objects/pack/pack-chain.pack'), Buffer.concat(parts))
  await writeFile(
    join(git, 'objects/pack/pack-chain.idx'),
    packIndex([{ sha: head, offset: previous }]),
  )
  await setHead(git, head)
}

/** git's offset encoding of an ofs-delta's distance back to its base. */
function varint6(distance: number): Buffer {
  const bytes = [distance & 0x7f]
  for (let rest = distance >>> 7; rest > 0; rest >>>= 7) {
    rest -= 1
    bytes.unshift(0x80 | (rest & 0x7f))
  }
  return Buffer.from(bytes)
}

/**
 * Pack index searches: 300 indexes of 1000 objects (10 steps a search) and a HEAD whose
 * `parentCount` parents, in a pack of their own, are each searched for in every one.
 */
export async function packSearches(git: string, parentCount: number): Promise<void> {
  await initGit(git)
  const parents = ids(parentCount)
  const head = `ab${'0'.repeat(37)}1`
  await looseCommit(git, head, `${parents.map((p) => `parent ${p}\n`).join('')}${HEADER}top\n`)
  const body = Buffer.from(`${HEADER}parent\n`)
  const pack = Buffer.concat([
    Buffer.from('PACK\0\0\0\x02\0\0\0\x01', 'latin1'),
    entryHeader(1, body.length),
    deflateSync(body),
    Buffer.alloc(20),
  ])
  await writeFile(join(git, 'objects/pack/pack-z.pack'), pack)
  const listing = (shas: string[]) => packIndex(shas.map((sha) => ({ sha, offset: 12 })))
  await writeFile(join(git, 'objects/pack/pack-z.idx'), listing(parents))
  for (let i = 0; i < 300; i++) {
    await writeFile(
      join(git, `objects/pack/pack-${String(i).padStart(3, '0')}.idx`),
      listing(ids(1000)),
    )
  }
  await setHead(git, head)
}

/** Pack index searches up to the bound on steps (a million). */
export const indexSearches = (git: string) => packSearches(git, 330)

/**
 * Not a worst case: this project's own repository (its objects, refs and HEAD, as a clone
 * holds them), what a reading of a real history costs.
 */
export async function thisRepository(git: string): Promise<void> {
  const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
    cwd: import.meta.dirname,
    encoding: 'utf8',
  }).trim()
  await mkdir(git, { recursive: true })
  for (const part of ['objects', 'refs', 'packed-refs']) {
    await cp(join(common, part), join(git, part), { recursive: true, force: true })
  }
  await writeFile(join(git, 'config'), '[core]\n\trepositoryformatversion = 0\n')
  await writeFile(join(git, 'HEAD'), 'ref: refs/heads/main\n')
}

export const WORST = { thisRepository, looseBytes, deltaChain, indexSearches }
