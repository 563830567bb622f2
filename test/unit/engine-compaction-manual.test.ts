import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ScriptedEngine, startScriptedEngine } from '../support/scripted-engine.ts'

let engine: ScriptedEngine
beforeAll(async () => {
  engine = startScriptedEngine()
})
afterAll(async () => {
  await engine.close()
})

type Sent = { role: string; content: string }[]
const lastRequest = () => (engine.model.requests.at(-1)?.messages ?? []) as Sent
const size = (messages: Sent) => messages.reduce((sum, m) => sum + m.content.length, 0)

describe('manual compaction of a short history', () => {
  it('never makes the next request larger: the summary replaces the older half', async () => {
    const { service, model } = engine
    const { session_id } = await service.createSession('t1', { instructions: 'Be brief.' })
    for (let n = 1; n <= 12; n++) {
      model.enqueue({ text: `answer ${n}: ${'detail '.repeat(30)}` })
      await service.stepTurn('t1', session_id, { input: `question ${n}: ${'context '.repeat(30)}` })
    }
    const before = lastRequest()
    expect(before).toHaveLength(24) // instructions + 11 exchanges + the 12th question

    model.enqueue({ text: 'The user asked twelve questions; each was answered.' })
    const compacted = await service.compact('t1', session_id)
    expect(compacted.events.some((e) => e.type === 'thread.compact_boundary')).toBe(true)

    model.enqueue({ text: 'answer 13' })
    await service.stepTurn('t1', session_id, { input: 'question 13' })
    const after = lastRequest()
    const beforeNext = before.length + 2 // the same request without compaction
    expect(after.length).toBeLessThan(beforeNext)
    expect(size(after)).toBeLessThan(size(before))
    expect(after.at(-1)?.content).toBe('question 13')
    model.assertDone()
  })
})
