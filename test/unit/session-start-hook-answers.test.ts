import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { readableHookAnswers } from '../../src/contract/kept-hook-answers.ts'
import { readSessionConfig } from '../../src/contract/session-config.ts'
import { startSession } from '../../src/core/session/create-session.ts'
import { readBatches } from '../../src/store/rehydrate.ts'
import { SessionLocator } from '../../src/store/session-locator.ts'
import { crashingObjectStore, SimulatedCrash } from '../support/crashing-object-store.ts'
import { echoTool, TOOL_SECRET } from '../support/engine-deps.ts'
import { inProcessHookReceiver, keptStartAnswer } from '../support/hook-receiver.ts'
import { startScriptedEngine, useScriptedEngine } from '../support/scripted-engine.ts'

/**
 * A `session_start` hook's answer over the inline limit (64 KiB) when a session is created or
 * forked: the hooks run before batch 0, which records the answers they kept (`hook_answers`),
 * so `GET …/artifacts` lists them from the session's first batch. A start that dies before
 * batch 0 leaves no session and its retry lists the answer once; a retried start of a chosen id
 * whose batch 0 exists runs no hook again.
 */
const hooks = inProcessHookReceiver(TOOL_SECRET)
const fixture = useScriptedEngine({ hooks })

/** An answer of `lines` lines, well over the inline limit. */
const longAnswer = (mark: string, lines = 3_000) =>
  Array.from({ length: lines }, (_, n) => `${mark} ${n} ${'s'.repeat(40)}`).join('\n')

const startHooks = (url: string) => [
  { event: 'session_start' as const, type: 'http' as const, name: 'boot', url },
]

async function whole(id: string, sessionId: string): Promise<string> {
  const { service } = fixture.engine
  const opened = await service.getOutputArtifact('t1', sessionId, id)
  let text = ''
  const decoder = new TextDecoder()
  for await (const part of opened.read(0, opened.artifact.size))
    text += decoder.decode(part, { stream: true })
  return text + decoder.decode()
}

describe('session_start hook answers kept as a session is created or forked', () => {
  it('are recorded by batch 0 and listed with seq 0 and no turn, readable whole', async () => {
    const { service, store, deps } = fixture.engine
    const answer = longAnswer('startup')
    hooks.setReply(() => ({ body: answer }))
    const { session_id } = await service.createSession('t1', {
      hooks: startHooks(hooks.url('/start')),
    })
    expect(hooks.received.map((hook) => hook.body.source)).toEqual(['startup'])
    const listed = await service.listKeptOutputs('t1', session_id, { limit: 50 })
    expect(listed.outputs).toEqual([keptStartAnswer(answer)])
    const [kept] = listed.outputs
    expect(await whole(String(kept?.artifact_id), session_id)).toBe(answer)
    // Batch 0 holds it (the session's first and only batch), beside thread.started.
    const ref = { tenant: 't1', workspace: 'default', sessionId: session_id }
    const [batch] = await readBatches(store, deps.sessions.keys(ref), [0])
    if (!batch) throw new Error('no batch 0')
    expect(batch.events.map((line) => line.event.type)).toEqual(['thread.started'])
    expect(readableHookAnswers(batch.hook_answers).map((a) => a.artifact_id)).toEqual([
      kept?.artifact_id,
    ])
  })

  it('a fork records its own start hooks, source fork, in its batch 0', async () => {
    const { service, model, receiver } = fixture.engine
    hooks.setReply(() => ({ body: '{}' }))
    const { session_id: source } = await service.createSession('t1', {
      tools: [echoTool(receiver.url)],
      hooks: startHooks(hooks.url('/start')),
    })
    model.enqueue({ text: 'first' })
    expect((await service.stepTurn('t1', source, { input: 'go' })).status).toBe('completed')
    expect(await service.listKeptOutputs('t1', source, { limit: 50 })).toMatchObject({
      outputs: [],
    })
    const answer = longAnswer('fork', 2_500)
    hooks.setReply(() => ({ body: answer }))
    const forked = await service.fork('t1', source, { at_turn: 1 })
    expect(hooks.received.map((hook) => hook.body.source)).toEqual(['startup', 'fork'])
    const listed = await service.listKeptOutputs('t1', forked.session_id, { limit: 50 })
    expect(listed.outputs).toMatchObject([
      { kind: 'hook_answer', seq: 0, event: 'session_start', hook: 'boot', size: answer.length },
    ])
    expect(listed.outputs[0]).not.toHaveProperty('turn_id')
    expect(await whole(String(listed.outputs[0]?.artifact_id), forked.session_id)).toBe(answer)
    // The source lists none of the fork's.
    expect((await service.listKeptOutputs('t1', source, { limit: 50 })).outputs).toEqual([])
  })

  it('a start that dies before batch 0 leaves no session; its retry lists the answer once', async () => {
    const inner = new MemoryObjectStore()
    // The first process dies as it writes batch 0, after the hooks kept their answers.
    const { store: dying, crashed } = crashingObjectStore(
      inner,
      (key) => key.endsWith('/log/0000000000.json'),
      'before',
    )
    const first = startScriptedEngine({ store: dying, hooks })
    const second = startScriptedEngine({ store: inner, hooks })
    const answer = longAnswer('chosen')
    hooks.setReply(() => ({ body: answer }))
    const config = readSessionConfig({ hooks: startHooks(hooks.url('/start')) })
    const sessionId = 'session-chosen-start-1'
    const start = (deps: typeof first.deps) =>
      startSession(deps, new SessionLocator(deps.sessions.objects, ''), 't1', config, {
        source: 'startup',
        sessionId,
      })
    await expect(start(first.deps)).rejects.toBeInstanceOf(SimulatedCrash)
    expect(crashed()).toBe(true)
    await expect(second.service.getSession('t1', sessionId)).rejects.toMatchObject({
      code: 'not_found',
    })
    const ref = await start(second.deps)
    expect(hooks.received).toHaveLength(2)
    // Kept twice, stored once: one artifact, listed once.
    const descriptors = (await inner.list(`${second.deps.sessions.keys(ref).root}outputs/`)).objects
    expect(descriptors.filter((o) => o.key.endsWith('.json'))).toHaveLength(1)
    const listed = await second.service.listKeptOutputs('t1', sessionId, { limit: 50 })
    expect(listed.outputs).toMatchObject([{ kind: 'hook_answer', seq: 0, size: answer.length }])
    // Retried once the session exists: its conflict, and no hook runs again.
    await expect(start(second.deps)).rejects.toMatchObject({ code: 'conflict' })
    expect(hooks.received).toHaveLength(2)
  })
})

describe("a hook payload's transcript_path", () => {
  it.each([
    { store: 'one that appends (fs)', appendable: true },
    { store: 'one that cannot append (S3)', appendable: false },
  ])('names an events.jsonl the store holds on $store, else is null', async ({ appendable }) => {
    const store = new MemoryObjectStore({ appendable })
    const engine = startScriptedEngine({ store, hooks })
    const { session_id } = await engine.service.createSession('t1', {
      hooks: [{ event: 'stop', type: 'http', url: hooks.url('/stop') }],
    })
    engine.model.enqueue({ text: 'done' })
    expect((await engine.service.stepTurn('t1', session_id, { input: 'go' })).status).toBe(
      'completed',
    )
    const path = hooks.received.at(-1)?.body.transcript_path
    if (!appendable) {
      expect(path).toBeNull()
      return
    }
    expect(path).toBe(`t1/default/.vtcode/sessions/${session_id}/events.jsonl`)
    const file = new TextDecoder().decode((await store.get(String(path)))?.body)
    expect(file.split('\n')[0]).toContain('"type":"thread.started"')
  })
})
