import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { useEngine } from '../support/engine-fixture.ts'
import { echoTool, TOOL_SECRET } from '../support/engine-harness.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'

/**
 * HTTP hook answers over the inline limit (64 KiB) are kept whole as output artifacts: a long
 * deny still denies (before, the answer was cut, its JSON no longer parsed and the tool ran), an
 * answer too long to read a decision from fails the hook (so a fail-closed hook denies), and the
 * whole answer reads back byte-identical.
 */
const fixture = useEngine()
let hooks: Awaited<ReturnType<typeof startHookReceiver>>
beforeAll(async () => {
  hooks = await startHookReceiver(TOOL_SECRET)
})
afterAll(async () => {
  await hooks.close()
})

const call = { id: 'c1', name: 'lookup', arguments: '{"q":"x"}' }
const invocation = (events: ThreadEvent[]) =>
  events.flatMap((e) =>
    e.type === 'item.completed' && e.item.type === 'tool_invocation' ? [e.item] : [],
  )[0]
const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')

async function readArtifact(session: string, id: string): Promise<Buffer> {
  const kept = await fixture.engine.service.getOutputArtifact('t1', session, id)
  const parts: Uint8Array[] = []
  for await (const part of kept.read(0, kept.artifact.size)) parts.push(part)
  return Buffer.concat(parts)
}

/** A session whose blocking pre_tool_use hook answers `body`; the turn that calls its tool. */
async function hookedTurn(body: string, failClosed = false) {
  const { service, mock, receiver } = fixture.engine
  hooks.setReply(() => ({ body }))
  const { session_id } = await service.createSession('t1', {
    tools: [echoTool(receiver.url)],
    hooks: [
      {
        event: 'pre_tool_use',
        type: 'http',
        url: hooks.url('/pre'),
        blocking: true,
        fail_closed: failClosed,
      },
    ],
  })
  mock.enqueue({ toolCalls: [call] }, { text: 'after the hook' })
  const turn = await service.stepTurn('t1', session_id, { input: 'go' })
  expect(turn.status).toBe('completed')
  return { session_id, turn }
}

describe('HTTP hook answers over the inline limit', () => {
  it('a 200 KB deny still denies; the reason names the artifact keeping the whole answer', async () => {
    const body = JSON.stringify({
      decision: 'deny',
      reason: `policy says no ${'x'.repeat(200_000)}`,
    })
    const calls = fixture.engine.receiver.calls.length
    const { session_id, turn } = await hookedTurn(body)
    expect(invocation(turn.events)).toMatchObject({ outcome: 'hook_denied', status: 'failed' })
    expect(fixture.engine.receiver.calls).toHaveLength(calls)
    const told = JSON.stringify(fixture.engine.mock.requests.at(-1)?.body)
    expect(told.length).toBeLessThan(100_000)
    const id = /kept as artifact (out_[0-9a-f]{32})/.exec(told)?.[1] ?? ''
    expect(id).not.toBe('')
    expect(sha(await readArtifact(session_id, id))).toBe(sha(body))
  })

  it('an answer too long to read a decision from fails the hook: fail-closed denies, else a warning names it', async () => {
    const body = `{"decision":"allow","pad":"${'y'.repeat(3_000_000)}"}`
    const closed = await hookedTurn(body, true)
    expect(invocation(closed.turn.events)).toMatchObject({ outcome: 'hook_denied' })

    const open = await hookedTurn(body)
    expect(invocation(open.turn.events)).toMatchObject({ outcome: 'success' })
    const warning = open.turn.warnings?.join(' ') ?? ''
    expect(warning).toContain('more than the 1048576 a decision is read from')
    const id = /kept as artifact (out_[0-9a-f]{32})/.exec(warning)?.[1] ?? ''
    expect(sha(await readArtifact(open.session_id, id))).toBe(sha(body))
  })

  it('an answer within the limit is read as before', async () => {
    const { turn } = await hookedTurn(JSON.stringify({ decision: 'deny', reason: 'short no' }))
    expect(invocation(turn.events)).toMatchObject({ outcome: 'hook_denied' })
    expect(JSON.stringify(turn.events)).not.toContain('kept as artifact')
  })
})

describe('kept hook answers of any event are listed', () => {
  it("a long allow of pre_tool_use and a pre_compact's long answer, each with its hook", async () => {
    const { service, mock, receiver } = fixture.engine
    const pre = `{"decision":"allow","note":"${'p'.repeat(100_000)}"}`
    const compact = `{"note":"${'c'.repeat(150_000)}"}`
    hooks.setReply((hook) => ({ body: hook.path === '/pre' ? pre : compact }))
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      hooks: [
        { event: 'pre_tool_use', type: 'http', name: 'gate', url: hooks.url('/pre') },
        { event: 'pre_compact', type: 'http', url: hooks.url('/compact') },
      ],
    })
    mock.enqueue({ toolCalls: [call] }, { text: 'ran' })
    const turn = await service.stepTurn('t1', session_id, { input: 'go' })
    expect(invocation(turn.events)).toMatchObject({ outcome: 'success' })
    mock.enqueue({ text: 'the summary' })
    const compacted = await service.compact('t1', session_id)
    expect(compacted.events.map((e) => e.type)).toContain('thread.compact_boundary')

    const listed = await service.listKeptOutputs('t1', session_id, { limit: 50 })
    expect(listed.outputs).toMatchObject([
      {
        kind: 'hook_answer',
        event: 'pre_tool_use',
        hook: 'gate',
        tool_call_id: 'c1',
        size: pre.length,
      },
      { kind: 'hook_answer', event: 'pre_compact', hook: 'pre_compact#1', size: compact.length },
    ])
    const [first, second] = listed.outputs
    expect(sha(await readArtifact(session_id, first?.artifact_id ?? ''))).toBe(sha(pre))
    expect(sha(await readArtifact(session_id, second?.artifact_id ?? ''))).toBe(sha(compact))
  })
})
