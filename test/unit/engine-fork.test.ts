import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAll } from '../../src/store/list-all.ts'
import { type ScriptedEngine, startScriptedEngine } from '../support/scripted-engine.ts'

let engine: ScriptedEngine
beforeAll(async () => {
  engine = startScriptedEngine()
})
afterAll(async () => {
  await engine.close()
})

async function folder(prefix: string) {
  const { objects } = await listAll(engine.store, prefix)
  const out: Record<string, string> = {}
  for (const { key } of objects)
    out[key] = new TextDecoder().decode((await engine.store.get(key))?.body)
  return out
}

describe('fork', () => {
  it('seeds a new session with the summarized history and leaves the source byte-identical', async () => {
    const { service, model } = engine
    const { session_id } = await service.createSession('t1', { instructions: 'Be brief.' })
    model.enqueue({ text: 'a1' }, { text: 'a2' })
    await service.stepTurn('t1', session_id, { input: 'first request' })
    await service.stepTurn('t1', session_id, { input: 'second request' })
    const root = `t1/default/.vtcode/sessions/${session_id}/`
    const before = await folder(root)

    model.enqueue({ text: 'They asked twice; both answered.' })
    const forked = await service.fork('t1', session_id)
    expect(forked).toMatchObject({ status: 'active', forked_from: session_id })
    expect(forked.session_id).not.toBe(session_id)
    expect(await folder(root)).toEqual(before)

    // The summary call saw the transcript and asked for a summary, with no tools.
    const summaryCall = model.requests.at(-1) as {
      messages: { role: string; content: string }[]
      tools?: unknown[]
    }
    expect(summaryCall.messages.at(-1)?.content).toMatch(/Summarize the conversation/)
    expect(summaryCall.tools ?? []).toEqual([])

    // The fork's first turn sends: instructions with the orientation (the source's handoff),
    // summary, the newest user messages, the new input.
    model.enqueue({ text: 'continuing' })
    await service.stepTurn('t1', forked.session_id, { input: 'third' })
    const sent = (
      (model.requests.at(-1)?.messages ?? []) as { role: string; content: string }[]
    ).map((m) => `${m.role}:${m.content}`)
    expect(sent[0]).toMatch(
      /^system:Be brief\.\n\n\[Orientation Context\]\n\n## HANDOFF FROM PREVIOUS AGENT\n[\s\S]*### Current State\n2 turns, 2 model requests; 0 files modified\.\nLast answer of the previous agent:\na2\n[\s\S]*### Task Context\nfirst request\n/,
    )
    expect(sent.slice(1)).toEqual([
      'system:Previous conversation summary:\nThey asked twice; both answered.',
      'user:first request',
      'user:second request',
      'user:third',
    ])
    const view = await service.getSession('t1', forked.session_id)
    expect(view.num_turns).toBe(1)
    await expect(service.fork('t2', session_id)).rejects.toMatchObject({ code: 'not_found' })
  })

  it('carries the source memory envelope into the fork, first', async () => {
    const { service, model } = engine
    model.reset()
    const { session_id } = await service.createSession('t1', { instructions: 'Be brief.' })
    model.enqueue({ text: 'a1' }, { text: 'a2' }, { text: 'They asked twice.' })
    await service.stepTurn('t1', session_id, { input: 'first request' })
    await service.stepTurn('t1', session_id, { input: 'second request' })
    await service.compact('t1', session_id)
    // the saved summary serves the fork: no model call
    const forked = await service.fork('t1', session_id)
    model.enqueue({ text: 'continuing' })
    await service.stepTurn('t1', forked.session_id, { input: 'third' })
    const sent = ((model.requests.at(-1)?.messages ?? []) as { content: string }[]).map(
      (m) => m.content,
    )
    // the instructions (with the fork's orientation), then the source's envelope
    expect(sent[0]).toMatch(/^Be brief\./)
    expect(sent[1]).toMatch(/^\[Session Memory Envelope\]/)
    expect(sent[2]).toBe('Previous conversation summary:\nThey asked twice.')
    model.assertDone()
  })
})
