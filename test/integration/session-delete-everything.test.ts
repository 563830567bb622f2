import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { useEntryWithMock } from '../support/entry-with-mock.ts'

/**
 * `DELETE /v1/sessions/{id}` on `npm start` as a real process (the fs store, its embedded
 * runner with bubblewrap): every key of the session leaves the store but its deleted-session
 * marker — log, exports, callbacks outbox, background work records — and its sandbox workspace
 * leaves the runner, the symlinks its command planted removed as links, their targets intact.
 */
const entry = useEntryWithMock('delete-all', {
  TURNLINE_CALLBACK_ALLOW_HTTP: '1',
  TURNLINE_SANDBOX: 'require',
  // No sweep during the test: the work record written below stays as it is.
  TURNLINE_WORK_SWEEP_MS: '3600000',
})
/** A host folder outside every workspace, which the command's symlinks point at. */
let outside = ''

beforeAll(async () => {
  outside = join(entry.dir, 'host')
  await mkdir(outside)
  await writeFile(join(outside, 'keep.txt'), 'host file')
})

async function call(method: string, path: string, body?: unknown) {
  const response = await fetch(`${entry.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return { status: response.status, text: await response.text() }
}

describe('DELETE /v1/sessions/{id} on npm start', { timeout: 120_000 }, () => {
  it('leaves nothing of the session in the store or on the runner but the marker', async () => {
    const created = await call('POST', '/v1/sessions', {
      workspace: 'gdpr',
      callback: { url: 'http://127.0.0.1:9/notices' },
    })
    expect(created.status, created.text).toBe(201)
    const id = (JSON.parse(created.text) as { session_id: string }).session_id
    const cmd = `echo secret > notes.txt && ln -s ${outside} out && ln -s ${outside}/keep.txt keep`
    entry.mock.enqueue({
      toolCalls: [
        { id: 'c1', name: 'exec_command', arguments: JSON.stringify({ cmd, yield_time_ms: 5000 }) },
      ],
    })
    entry.mock.enqueue({ text: 'noted' })
    const turn = await call('POST', `/v1/sessions/${id}/turns`, { input: 'remember this' })
    expect(turn.status, turn.text).toBe(200)
    expect(JSON.parse(turn.text)).toMatchObject({ status: 'completed' })

    const workspace = join(entry.dir, 'data-runner', 'local', id)
    expect(readFileSync(join(workspace, 'notes.txt'), 'utf8')).toBe('secret\n')
    const store = new FsObjectStore({ root: join(entry.dir, 'data') })
    const work = `.turnline/work/pending/local/${id}/0123456789abcdef0123456789abcdef.json`
    await store.put(work, new TextEncoder().encode('{}'))
    const keys = async () =>
      (await listAll(store, '')).objects.map(({ key }) => key).filter((key) => key.includes(id))
    const before = await keys()
    for (const part of [
      `.turnline/sessions/${id}.json`,
      '/manifest.json',
      '/events.jsonl',
      '.turnline/callbacks/',
      '.turnline/work/',
    ]) {
      expect({ part, found: before.some((key) => key.includes(part)) }).toEqual({
        part,
        found: true,
      })
    }

    const deleted = await call('DELETE', `/v1/sessions/${id}`)
    expect(deleted.status, deleted.text).toBe(204)

    expect(await keys()).toEqual([
      expect.stringMatching(new RegExp(`^local/gdpr/\\.vtcode/sessions/${id}/log/\\d{10}\\.json$`)),
    ])
    expect(existsSync(workspace)).toBe(false)
    expect(existsSync(join(entry.dir, 'data-runner', '.runner-state', 'local', id))).toBe(false)
    expect(await readdir(outside)).toEqual(['keep.txt'])
    expect(readFileSync(join(outside, 'keep.txt'), 'utf8')).toBe('host file')
    expect((await call('GET', `/v1/sessions/${id}`)).status).toBe(404)
  })

  it('DELETE /v1/workspaces also erases its loops: sandbox, pointer, schedule, work records', async () => {
    const created = await call('POST', '/v1/loops', {
      loop_id: 'nightly-gc',
      task: 'tidy up',
      session: { workspace: 'loopy' },
      // Never due during the test (a run would hold the loop's session).
      schedule: { cron: '0 0 1 1 *' },
    })
    expect(created.status, created.text).toBe(201)
    const cmd = `echo loop > loop.txt && ln -s ${outside} out`
    entry.mock.enqueue({
      toolCalls: [
        { id: 'c1', name: 'exec_command', arguments: JSON.stringify({ cmd, yield_time_ms: 5000 }) },
      ],
    })
    entry.mock.enqueue({ text: 'tidied' })
    const step = await call('POST', '/v1/loops/nightly-gc/step', {})
    expect(step.status, step.text).toBe(200)
    const sandbox = join(entry.dir, 'data-runner', 'local', 'loop-nightly-gc')
    expect(readFileSync(join(sandbox, 'loop.txt'), 'utf8')).toBe('loop\n')
    const store = new FsObjectStore({ root: join(entry.dir, 'data') })
    const marker = '.turnline/work/done/local/loop.nightly-gc/0123456789abcdef0123456789abcdef.json'
    await store.put(marker, new Uint8Array())
    const loopKeys = async () =>
      (await listAll(store, '')).objects
        .map(({ key }) => key)
        .filter((key) => key.includes('nightly-gc'))
    expect(await loopKeys()).toEqual(
      expect.arrayContaining([
        'local/.turnline/loops/nightly-gc.json',
        '.turnline/schedules/local/nightly-gc.json',
        'local/loopy/.vtcode/state/loop-nightly-gc.json',
        marker,
      ]),
    )

    const deleted = await call('DELETE', '/v1/workspaces/loopy')
    expect(deleted.status, deleted.text).toBe(204)

    // Left: the deleted-session marker of the step's session, as every deleted session leaves.
    expect(await loopKeys()).toEqual([
      expect.stringMatching(
        /^local\/loopy\/\.vtcode\/sessions\/nightly-gc-step-0\/log\/\d{10}\.json$/,
      ),
    ])
    expect(existsSync(sandbox)).toBe(false)
    expect(await readdir(outside)).toEqual(['keep.txt'])
    expect((await call('GET', '/v1/loops/nightly-gc')).status).toBe(404)
  })
})
