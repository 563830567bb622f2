import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { contentArtifactId as contentId } from '../support/content-artifact-id.ts'
import { useEngine } from '../support/engine-fixture.ts'
import { echoTool, TOOL_SECRET } from '../support/engine-harness.ts'
import { startHookReceiver } from '../support/hook-receiver.ts'

/**
 * HTTP hook answers over the inline limit (64 KiB) are kept whole as output artifacts: a long
 * deny still denies (before, the answer was cut, its JSON no longer parsed and the tool ran), an
 * answer too long to read a decision from fails the hook (so a fail-closed hook denies), and the
 * whole answer reads back byte-identical. The operators read every kept answer; the model only
 * the one a deny's reason named to it.
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

const echoReply = (call: { body: { arguments?: unknown } }) => ({
  body: JSON.stringify({ echo: call.body.arguments }),
})

/** The tool messages of the model's last request, by tool call id. */
function toolMessages(): Map<string, string> {
  const messages = (fixture.engine.mock.requests.at(-1)?.body.messages ?? []) as {
    role: string
    tool_call_id?: string
    content: string
  }[]
  return new Map<string, string>(
    messages.flatMap((m) => (m.role === 'tool' ? [[m.tool_call_id ?? '', m.content]] : [])),
  )
}

const SECRET_MARK = 'audit-secret-5e1f'
/** A non-blocking hook's long allow: kept whole, named to nobody but the operators. */
const AUDIT = JSON.stringify({ decision: 'allow', note: `${SECRET_MARK} ${'a'.repeat(100_000)}` })
/** A blocking hook's long deny: its reason names the kept answer to the model. */
const DENY = JSON.stringify({ decision: 'deny', reason: `policy says no ${'d'.repeat(100_000)}` })
/** The tool's long answer: kept, its preview names it to the model. */
const TOOL_ANSWER = `tool-answer-head ${'t'.repeat(100_000)} tool-answer-tail`

const read = (id: string, artifact: string, args: Record<string, unknown> = {}) => ({
  id,
  name: 'read_tool_output',
  arguments: JSON.stringify({ artifact_id: artifact, ...args }),
})

describe("what the model reads of hooks' kept answers", () => {
  it('read_tool_output refuses a hidden hook answer as an unknown id; a named deny and tool outputs stay readable, across rehydration', async () => {
    const { service, mock, receiver, deps, store } = fixture.engine
    onTestFinished(() => receiver.setReply(echoReply))
    const q = (hook: { body: Record<string, unknown> }) =>
      (hook.body.tool_input as { q?: string } | undefined)?.q
    hooks.setReply((hook) => {
      if (hook.path === '/audit') return { body: q(hook) === 'big' ? AUDIT : '{}' }
      return { body: q(hook) === 'forbidden' ? DENY : '{}' }
    })
    receiver.setReply(() => ({ body: TOOL_ANSWER }))
    const { session_id } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      hooks: [
        {
          event: 'pre_tool_use',
          type: 'http',
          name: 'audit',
          matcher: 'lookup',
          url: hooks.url('/audit'),
        },
        {
          event: 'pre_tool_use',
          type: 'http',
          name: 'gate',
          matcher: 'lookup',
          url: hooks.url('/gate'),
          blocking: true,
        },
      ],
    })
    mock.enqueue(
      {
        toolCalls: [
          { id: 'c_big', name: 'lookup', arguments: '{"q":"big"}' },
          { id: 'c_forbidden', name: 'lookup', arguments: '{"q":"forbidden"}' },
        ],
      },
      { text: 'looked' },
    )
    const first = await service.stepTurn('t1', session_id, { input: 'look' })
    expect(first.status, JSON.stringify(first.warnings)).toBe('completed')
    const told = toolMessages()
    const toolId = /kept whole as artifact (out_[0-9a-f]{32})/.exec(told.get('c_big') ?? '')?.[1]
    const denyId = /kept as artifact (out_[0-9a-f]{32})/.exec(told.get('c_forbidden') ?? '')?.[1]
    expect(toolId).toBe(contentId(TOOL_ANSWER))
    expect(denyId).toBe(contentId(DENY))
    // The audit hook's answer is named to the model nowhere, but its id is the content's hash.
    const hiddenId = contentId(AUDIT)
    expect(JSON.stringify(mock.requests)).not.toContain(hiddenId)

    // The operators list and read every kept answer, the hidden one included.
    const listed = await service.listKeptOutputs('t1', session_id, { limit: 50 })
    expect(listed.outputs.map((o) => [o.kind, o.artifact_id])).toEqual(
      expect.arrayContaining([
        ['tool_output', toolId],
        ['hook_answer', hiddenId],
        ['hook_answer', denyId],
      ]),
    )
    const kept = await service.getOutputArtifact('t1', session_id, hiddenId)
    const parts: Uint8Array[] = []
    for await (const part of kept.read(0, kept.artifact.size)) parts.push(part)
    expect(Buffer.concat(parts).toString()).toBe(AUDIT)

    // The next turn runs on another instance: nothing but the store carries what was named.
    const rehydrated = new SessionService({ ...deps, sessions: new SessionStore({ store }) })
    const unknownId = contentId('an answer no one kept')
    mock.enqueue(
      {
        toolCalls: [
          read('r_hidden', hiddenId, { search: SECRET_MARK }),
          read('r_unknown', unknownId, { search: SECRET_MARK }),
          read('r_deny', denyId ?? '', { length: 60 }),
          read('r_tool', toolId ?? '', { search: 'tool-answer-head' }),
        ],
      },
      { text: 'read' },
    )
    const second = await rehydrated.stepTurn('t1', session_id, { input: 'read them' })
    expect(second.status, JSON.stringify(second.warnings)).toBe('completed')
    const answers = toolMessages()
    const notFound = (id: string) => `no output artifact ${id} in this session`
    expect(answers.get('r_unknown')).toContain(notFound(unknownId))
    // The same answer as an id the session does not have: not even its existence is told.
    expect(answers.get('r_hidden')?.replace(hiddenId, unknownId)).toBe(answers.get('r_unknown'))
    expect(answers.get('r_hidden')).not.toContain(SECRET_MARK)
    expect(answers.get('r_deny')).toContain('{"decision":"deny","reason":"policy says no')
    expect(answers.get('r_tool')).toContain('1 matching line')
    expect(answers.get('r_tool')).toContain('tool-answer-head')
  })
})
