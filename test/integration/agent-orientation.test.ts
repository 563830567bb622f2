import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { parseEngineState } from '../../src/contract/engine-state.ts'
import { hash16 } from '../../src/core/compaction/segment-boundary.ts'
import { useEngineWithRunner } from '../support/engine-with-runner.ts'

/**
 * The orient phase in the engine: a session's first turn starts with an `[Orientation Context]`
 * system section built from the workspace's artifacts (and, through the runner, its git log),
 * frozen into the request segment: later turns send the same prefix even when the artifacts
 * change, and the segment's prefix hash covers it.
 */
const fixture = useEngineWithRunner('orient')
beforeEach(() => fixture.engine.mock.reset())

const system = (n: number) => {
  const messages = fixture.engine.mock.requests[n]?.body.messages as {
    role: string
    content: string
  }[]
  return messages[0]?.role === 'system' ? messages[0].content : ''
}

async function state(sessionId: string) {
  const ref = { tenant: 'local', workspace: 'orient-ws', sessionId }
  return parseEngineState((await fixture.engine.deps.sessions.open(ref)).state)
}

describe('orient phase', () => {
  it('freezes the orientation into the first request segment', async () => {
    const { service, mock } = fixture.engine
    await service.putArtifact('local', 'orient-ws', {
      kind: 'spec',
      content: '# Spec\n\nA resumable harness.\n',
    })
    await service.appendArtifact('local', 'orient-ws', 'decisions', 'keep S3 the only store')
    const { session_id } = await service.createSession('local', {
      workspace: 'orient-ws',
      instructions: 'Be brief.',
    })
    const before = await service.getOrientation('local', session_id, { preview: true })
    expect(before).toMatchObject({ orientation: null, pending: 'session_start' })
    expect(before.preview?.sections).toEqual(['Spec', 'Loop Decisions'])

    mock.enqueue({ text: 'one' }, { text: 'two' })
    await service.stepTurn('local', session_id, { input: 'first' })
    const first = system(0)
    expect(first).toMatch(
      /^Be brief\.\n\n\[Orientation Context\]\n\n### Spec\nSpec: A resumable harness\.\n.*\n\n### Loop Decisions\n- \[.+\] keep S3 the only store\n/,
    )
    const s1 = await state(session_id)
    const orientation = s1.agent?.orientation
    expect(orientation).toMatchObject({
      reason: 'session_start',
      sections: ['Spec', 'Loop Decisions'],
    })
    expect(s1.agent?.orient_pending).toBeUndefined()
    expect(orientation?.digest).toBe(await hash16(orientation?.text ?? ''))
    const segment = s1.compaction?.segment
    expect(segment?.orientation_digest).toBe(orientation?.digest)
    expect(segment?.prefix_hash).toBe(await hash16(first))

    // Artifacts change; the segment's prefix does not (orientation is frozen until the next orient phase).
    await service.appendArtifact('local', 'orient-ws', 'notes', 'a later note')
    await service.stepTurn('local', session_id, { input: 'second' })
    expect(system(1)).toBe(first)
    expect((await state(session_id)).compaction?.segment).toEqual(segment)
    mock.assertDone()
  })

  it('adds nothing for an empty workspace and when orientation is off', async () => {
    const { service, mock } = fixture.engine
    const empty = await service.createSession('local', {
      workspace: 'empty-ws',
      instructions: 'Hi.',
    })
    const off = await service.createSession('local', {
      workspace: 'orient-ws',
      instructions: 'Hi.',
      harness: { orientation_enabled: false },
    })
    mock.enqueue({ text: 'a' }, { text: 'b' })
    await service.stepTurn('local', empty.session_id, { input: 'x' })
    await service.stepTurn('local', off.session_id, { input: 'x' })
    expect(system(0)).toBe('Hi.')
    expect(system(1)).toBe('Hi.')
    const view = await service.getOrientation('local', empty.session_id)
    expect(view.orientation).toMatchObject({ text: '', sections: [] })
  })

  it("starts no process in a session's first turn: the git log is read from the workspace", async () => {
    const { service, mock } = fixture.engine
    const plain = await service.createSession('local', { workspace: 'no-repo-ws' })
    mock.enqueue({ text: 'Hi.' })
    await service.stepTurn('local', plain.session_id, { input: 'hello' })
    // Every command the runner starts is claimed under its state folder first.
    const claims = join(fixture.root, '.runner-state', 'local', plain.session_id, 'requests')
    expect(await readdir(claims).catch(() => [])).toEqual([])

    mock.assertDone()
  })

  it('shows a forked sub-agent the git log of its worktree through the runner', async () => {
    const { service, mock } = fixture.engine
    const { session_id } = await service.createSession('local', { workspace: 'git-ws' })
    mock.enqueue(
      {
        toolCalls: [
          {
            id: 'g',
            name: 'exec_command',
            arguments: JSON.stringify({
              cmd: 'git init -q && echo a > a.txt && git add . && git -c user.email=t@t -c user.name=t commit -qm "first commit" && echo b > b.txt && git add . && git -c user.email=t@t -c user.name=t commit -qm "second commit"',
              yield_time_ms: 5000,
            }),
          },
        ],
      },
      { text: 'repo ready' },
      { text: 'summary of the parent' },
      { text: 'child answer' },
    )
    await service.stepTurn('local', session_id, { input: 'init' })
    const child = await service.fork('local', session_id, { isolation: 'worktree' })
    await service.stepTurn('local', child.session_id, { input: 'go' })
    expect(system(3)).toMatch(
      /\[Orientation Context\]\n\n### Recent Git Log\n[0-9a-f]{7,} second commit\n[0-9a-f]{7,} first commit\n\n## HANDOFF FROM PREVIOUS AGENT\n/,
    )
    const view = await service.getOrientation('local', child.session_id)
    expect(view.orientation?.reason).toBe('fork')
    mock.assertDone()
  })

  it('serves the orientation over HTTP', async () => {
    const { session_id } = await fixture.engine.service.createSession('local', {
      workspace: 'orient-ws',
    })
    const res = await fixture.app.request(`/v1/sessions/${session_id}/orientation?preview=1`)
    expect(res.status).toBe(200)
    const body = (await res.json()) as { preview: { text: string } }
    expect(body).toMatchObject({ session_id, orientation: null, pending: 'session_start' })
    expect(body.preview.text).toContain('a later note')
    expect(
      (await fixture.app.request(`/v1/sessions/${session_id}/orientation?preview=2`)).status,
    ).toBe(400)
  })
})
