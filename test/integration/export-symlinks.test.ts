import { lstat, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { startEngine } from '../support/engine-harness.ts'

/**
 * `harness.event_log_path` writes a tenant-chosen path in the workspace folder of the fs store
 * after every turn. A link planted there — at the export's folder or at its own name, pointing at
 * a host file outside the store — never redirects the write: the host file keeps its bytes, the
 * turn still completes, and the failed export is logged.
 */
let base = ''
let engine: Awaited<ReturnType<typeof startEngine>>
const HOST_TEXT = 'host file: must never change\n'

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'turnline-export-links-'))
  engine = await startEngine({ store: new FsObjectStore({ root: join(base, 'store') }) })
})
afterAll(async () => {
  await engine?.close()
  await rm(base, { recursive: true, force: true })
})
beforeEach(async () => {
  engine.mock.reset()
  await mkdir(join(base, 'host'), { recursive: true })
  await writeFile(join(base, 'host', 'run.jsonl'), HOST_TEXT)
})

async function sessionWithExport(workspace: string) {
  const { session_id } = await engine.service.createSession('x1', {
    workspace,
    harness: { event_log_path: 'exports/run.jsonl' },
  })
  engine.mock.enqueue({ text: 'first' })
  await engine.service.stepTurn('x1', session_id, { input: 'one' })
  const exported = join(base, 'store', 'x1', workspace, 'exports', 'run.jsonl')
  expect(await readFile(exported, 'utf8')).toContain('"thread.started"')
  return { sessionId: session_id, exported }
}

describe('the event log export and a planted link', () => {
  it('a link in place of the export folder: the write is refused and logged, the host file kept', async () => {
    const { sessionId, exported } = await sessionWithExport('folder-link')
    await rm(join(exported, '..'), { recursive: true })
    await symlink(join(base, 'host'), join(exported, '..'))
    engine.mock.enqueue({ text: 'second' })
    const turn = await engine.service.stepTurn('x1', sessionId, { input: 'two' })
    expect(turn.status).toBe('completed')
    expect(await readFile(join(base, 'host', 'run.jsonl'), 'utf8')).toBe(HOST_TEXT)
    expect(engine.logs).toContainEqual(
      expect.objectContaining({
        msg: 'session exports: writing a file failed',
        session: sessionId,
        path: 'exports/run.jsonl',
        error: expect.stringMatching(/symbolic link/),
      }),
    )
  })

  it('a link at the export name: the export replaces the link, the host file kept', async () => {
    const { sessionId, exported } = await sessionWithExport('name-link')
    await rm(exported)
    await symlink(join(base, 'host', 'run.jsonl'), exported)
    engine.mock.enqueue({ text: 'second' })
    const turn = await engine.service.stepTurn('x1', sessionId, { input: 'two' })
    expect(turn.status).toBe('completed')
    expect(await readFile(join(base, 'host', 'run.jsonl'), 'utf8')).toBe(HOST_TEXT)
    expect((await lstat(exported)).isFile()).toBe(true)
    expect(await readFile(exported, 'utf8')).toContain('"second"')
  })
})
