import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApp } from '../../functions/app.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { startEngine } from '../support/engine-harness.ts'
import { requireServices } from '../support/services.ts'
import { createTestBucket } from '../support/test-bucket.ts'

/**
 * Durable workspace artifacts on S3 (moto, conditional writes as AWS): the HTTP routes that
 * read and write them, and the model's tools that append notes and decisions, update the ledger
 * and write or read harness documents.
 */
const KEY_A = 'artifacts-key-a-0123456789'
const KEY_B = 'artifacts-key-b-0123456789'
let bucket: Awaited<ReturnType<typeof createTestBucket>>
let engine: Awaited<ReturnType<typeof startEngine>>
let app: ReturnType<typeof createApp>

beforeAll(async () => {
  bucket = await createTestBucket(requireServices().s3, 'artifacts')
  engine = await startEngine({ store: bucket.store('p') })
  app = createApp({
    api: engine.service,
    auth: {
      keys: [
        { key: KEY_A, tenant: 'tenant-a' },
        { key: KEY_B, tenant: 'tenant-b' },
      ],
    },
    log: () => {},
  })
})
afterAll(async () => {
  await engine?.close()
  await bucket?.destroy()
})

function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return app.request(path, {
    method,
    headers: {
      authorization: `Bearer ${KEY_A}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
}

const base = '/v1/workspaces/repo-1/artifacts'
const text = async (key: string) => {
  const stored = await engine.store.get(key)
  return stored ? new TextDecoder().decode(stored.body) : undefined
}

describe('artifact routes', () => {
  it('writes, reads, lists and deletes a harness document at its .vtcode/ path', async () => {
    const put = await call('PUT', `${base}/spec`, {
      content: '# Spec\n\nBuild a stronger exec harness.\n\nKeep it resumable.\n',
    })
    expect(put.status).toBe(200)
    const view = (await put.json()) as { etag: string; summary: string; path: string }
    expect(view).toMatchObject({
      kind: 'spec',
      path: '.vtcode/tasks/current_spec.md',
      summary: 'Spec: Build a stronger exec harness. | Keep it resumable.',
    })
    expect(await text('tenant-a/repo-1/.vtcode/tasks/current_spec.md')).toContain('resumable')

    const list = (await (await call('GET', base)).json()) as {
      artifacts: { kind: string; exists: boolean }[]
    }
    expect(list.artifacts.filter((a) => a.exists).map((a) => a.kind)).toEqual(['spec'])
    expect(list.artifacts).toHaveLength(12)

    // If-Match: only the version read may be replaced.
    const stale = await call('PUT', `${base}/spec`, { content: 'x' }, { 'if-match': '"stale"' })
    expect(stale.status).toBe(409)
    const ok = await call(
      'PUT',
      `${base}/spec`,
      { content: '# Spec\n\nv2\n' },
      { 'if-match': view.etag },
    )
    expect(ok.status).toBe(200)

    // Another tenant's workspace of the same name is another folder.
    const other = await app.request(`${base}/spec`, {
      headers: { authorization: `Bearer ${KEY_B}` },
    })
    expect(other.status).toBe(404)

    expect((await call('DELETE', `${base}/spec`)).status).toBe(204)
    expect((await call('GET', `${base}/spec`)).status).toBe(404)
  })

  it('keeps notes append-only and loses no entry under concurrent appends', async () => {
    // Concurrency on the memory store, whose conditional writes are atomic as S3's are: moto
    // occasionally lets two If-Match writers of the same version both win under load.
    const memory = await startEngine()
    const local = createApp({ api: memory.service, auth: { keys: [] }, log: () => {} })
    const appends = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        local.request(`${base}/notes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: `note ${i}\nsecond line` }),
        }),
      ),
    )
    await memory.close()
    expect(appends.map((r) => r.status)).toEqual(Array(8).fill(201))
    const notes = (await (await local.request(`${base}/notes`)).json()) as {
      content: string
      value: { text: string }[]
    }
    expect(notes.content.startsWith('# Loop Notes\n\n- [')).toBe(true)
    expect(notes.value.map((e) => e.text).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `note ${i} second line`),
    )
    expect((await call('PUT', `${base}/notes`, { content: 'rewrite' })).status).toBe(409)
    expect((await call('POST', `${base}/spec`, { text: 'x' })).status).toBe(409)
    expect((await call('POST', `${base}/decisions`, { text: '   ' })).status).toBe(400)
    expect((await call('PUT', `${base}/context_reset`, { content: 'x' })).status).toBe(409)
  })

  it('updates the progress ledger field by field', async () => {
    expect((await call('PUT', `${base}/progress`, { confidence: 0.5 })).status).toBe(400)
    const created = await call('PUT', `${base}/progress`, {
      goal: 'ship the feature',
      milestones: [
        { id: '1', description: 'design', status: 'done' },
        { id: '2', description: 'implement', status: 'in_progress' },
      ],
    })
    expect(created.status).toBe(200)
    expect(await created.json()).toMatchObject({
      summary: 'Goal: ship the feature | Completion: 50% | Confidence: 1.00 | on track',
    })
    const stalled = await call('PUT', `${base}/progress`, {
      milestone_status: [{ id: '9', status: 'done' }],
      stalled: true,
    })
    expect(await stalled.json()).toMatchObject({
      summary: 'Goal: ship the feature | Completion: 50% | Confidence: 0.90 | STALLED',
      warnings: ['unknown milestone ids ignored: 9'],
    })
  })

  it('answers bad kinds, workspaces and bodies with 400', async () => {
    expect((await call('GET', '/v1/workspaces/repo-1/artifacts/secrets')).status).toBe(400)
    expect((await call('GET', '/v1/workspaces/..x/artifacts')).status).toBe(400)
    expect((await call('PUT', `${base}/spec`, { content: 'x', extra: 1 })).status).toBe(400)
    expect((await call('PUT', `${base}/handoff`, { state_summary: 'x' })).status).toBe(400)
  })
})

const tool = (id: string, name: string, args: object) => ({
  id,
  name,
  arguments: JSON.stringify(args),
})
const outputs = (events: ThreadEvent[]) =>
  events.flatMap((e) =>
    e.type === 'item.completed' && e.item.type === 'tool_output' ? [e.item] : [],
  )

describe('artifact tools', () => {
  it('lets the model append notes and decisions, update the ledger and write and read documents', async () => {
    const { service, mock } = engine
    const { session_id } = await service.createSession('tenant-a', { workspace: 'tools-ws' })
    mock.enqueue(
      {
        toolCalls: [
          tool('a', 'append_note', { text: 'the build needs node 20' }),
          tool('b', 'record_decision', { text: 'use S3 conditional writes' }),
          tool('c', 'update_progress', {
            goal: 'make it durable',
            milestones: [{ id: 'm1', description: 'store', status: 'done' }],
          }),
          tool('d', 'write_artifact', {
            kind: 'contract',
            content: '# Contract\n\n- verify with npm test\n',
          }),
          tool('e', 'read_artifact', { kind: 'decisions' }),
        ],
      },
      { text: 'recorded' },
    )
    const turn = await service.stepTurn('tenant-a', session_id, { input: 'remember things' })
    expect(turn.status).toBe('completed')
    const results = outputs(turn.events)
    expect(results.map((o) => o.status)).toEqual(Array(5).fill('completed'))
    expect(results[4]?.output).toContain('use S3 conditional writes')
    const catalog = ((mock.requests[0]?.body.tools ?? []) as { function: { name: string } }[]).map(
      (t) => t.function.name,
    )
    expect(catalog).toEqual(
      expect.arrayContaining([
        'append_note',
        'record_decision',
        'update_progress',
        'read_artifact',
      ]),
    )
    const root = 'tenant-a/tools-ws/.vtcode/'
    expect(await text(`${root}state/notes.md`)).toMatch(
      /^# Loop Notes\n\n- \[.+Z\] the build needs node 20\n$/,
    )
    expect(await text(`${root}state/decisions.md`)).toContain('use S3 conditional writes')
    expect(JSON.parse((await text(`${root}state/progress.json`)) ?? '{}')).toMatchObject({
      goal: 'make it durable',
      session_id,
    })
    expect(await text(`${root}tasks/current_contract.md`)).toContain('npm test')
    mock.assertDone()
  })

  it('allows only the read-only artifact tool in plan mode', async () => {
    const { service, mock } = engine
    const { session_id } = await service.createSession('tenant-a', {
      workspace: 'tools-ws',
      permissions: { mode: 'plan' },
    })
    mock.enqueue(
      {
        toolCalls: [
          tool('r', 'read_artifact', { kind: 'notes' }),
          tool('w', 'append_note', { text: 'no' }),
        ],
      },
      { text: 'looked' },
    )
    const turn = await service.stepTurn('tenant-a', session_id, { input: 'plan' })
    const [read, write] = outputs(turn.events)
    expect(read).toMatchObject({ status: 'completed', output: expect.stringContaining('node 20') })
    expect(write).toMatchObject({ status: 'failed', output: expect.stringContaining('plan mode') })
    mock.assertDone()
  })

  it('leaves the tools out when harness.artifact_tools is false', async () => {
    const { service, mock } = engine
    const { session_id } = await service.createSession('tenant-a', {
      harness: { artifact_tools: false },
    })
    mock.enqueue({ text: 'hi' })
    await service.stepTurn('tenant-a', session_id, { input: 'hi' })
    expect(mock.requests.at(-1)?.body.tools).toBeUndefined()
    mock.assertDone()
  })
})
