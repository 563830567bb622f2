import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Refusal } from '../../adapters/runner/refusal.ts'
import { SpoolFile } from '../../adapters/runner/spool-file.ts'
import { type OpenWorkspace, WorkspaceRoot } from '../../adapters/runner/workspace-root.ts'

/** The spool file on a real filesystem: held, released and reopened, against swapped names. */
const owner = { uid: 65534, gid: 65534 }
const rel = '.vtcode/context/tool_outputs/write_stdin_run-test.txt'
let base: string
let root: WorkspaceRoot
let sessions = 0

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: the spool is handed to another user')
  base = await mkdtemp(join(tmpdir(), 'turnline-spool-file-'))
  root = WorkspaceRoot.open(base)
})

afterAll(async () => {
  root?.close()
  if (base) await rm(base, { recursive: true, force: true })
})

function workspace(): { open: () => OpenWorkspace; path: string } {
  const session = `s${++sessions}`
  return { open: () => root.open('acme', session, owner), path: join(base, 'acme', session) }
}

function refusalOf(run: () => unknown): Refusal {
  try {
    run()
  } catch (error) {
    if (error instanceof Refusal) return error
    throw error
  }
  throw new Error('expected a refusal')
}

describe('a spool file', () => {
  it('is made with its folders for the owner, and read through its descriptor, then reopened', async () => {
    const ws = workspace()
    const open = ws.open()
    const spool = SpoolFile.create(open, rel, owner, ws.open)
    open.close()
    spool.write(Buffer.from('hello '), 0)
    spool.write(Buffer.from('world\n'), 6)
    for (const part of ['.vtcode', '.vtcode/context', '.vtcode/context/tool_outputs', rel]) {
      expect((await stat(join(ws.path, part))).uid, part).toBe(owner.uid)
    }
    expect(spool.read(6, 100).toString()).toBe('world\n')
    // Its name replaced: the held descriptor still reads the command's own bytes.
    await rm(join(ws.path, rel))
    await symlink('/proc/self/environ', join(ws.path, rel))
    expect(spool.read(0, 100).toString()).toBe('hello world\n')

    spool.release()
    const viaLink = refusalOf(() => spool.read(0, 100))
    expect([viaLink.code, viaLink.message]).toEqual([
      'path_escape',
      expect.stringMatching(/output spool.*symlink/),
    ])
  })

  it('once released, reads only the very file it created', async () => {
    const ws = workspace()
    const open = ws.open()
    const spool = SpoolFile.create(open, rel, owner, ws.open)
    open.close()
    spool.write(Buffer.from('own bytes\n'), 0)
    spool.release()
    expect(spool.read(0, 100).toString()).toBe('own bytes\n')
    expect(spool.size()).toBe(10)

    await rm(join(ws.path, rel))
    await writeFile(join(ws.path, rel), 'forged\n')
    const other = refusalOf(() => spool.read(0, 100))
    expect([other.code, other.message]).toEqual([
      'conflict',
      expect.stringMatching(/replaced by another file/),
    ])
    await rm(join(ws.path, rel))
    expect(refusalOf(() => spool.read(0, 100)).code).toBe('not_found')
  })

  it('is never made through a symlinked folder, even one pointing inside', async () => {
    const ws = workspace()
    root.open('acme', `s${sessions}`, owner).close()
    await mkdir(join(ws.path, 'elsewhere'))
    await symlink('elsewhere', join(ws.path, '.vtcode'))
    const open = ws.open()
    try {
      expect(refusalOf(() => SpoolFile.create(open, rel, owner, ws.open)).code).toBe('path_escape')
    } finally {
      open.close()
    }
    await expect(readFile(join(ws.path, 'elsewhere', 'context'))).rejects.toThrow()
  })
})
