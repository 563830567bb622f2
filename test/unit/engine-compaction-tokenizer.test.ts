import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Tokenizer } from '../../src/ports/tokenizer.ts'
import { approximateTokenizer } from '../../src/ports/tokenizer.ts'
import { committed, scriptAgent } from '../support/compaction-engine.ts'
import { type ScriptedEngine, startScriptedEngine } from '../support/scripted-engine.ts'

/**
 * The tokenizer is a ServiceDeps option asked for only when provider usage does not settle the
 * decision: far below the soft threshold nothing is tokenized, near it the tokenizer is loaded
 * once per invocation and the estimate starts from the provider's count (the anchor).
 */
let engine: ScriptedEngine
const loads: string[] = []
let counted = 0
const spy: Tokenizer = {
  encoding: 'approximate',
  count: (text) => {
    counted += 1
    return approximateTokenizer.count(text)
  },
}
beforeAll(async () => {
  engine = startScriptedEngine()
  engine.deps.tokenizer = async (model) => {
    loads.push(model)
    return spy
  }
})
afterAll(async () => {
  await engine.close()
})
beforeEach(() => {
  engine.model.reset()
  loads.length = 0
  counted = 0
})

describe('token accounting', () => {
  it('does not load a tokenizer while the provider count plus a byte bound stays below soft', async () => {
    const { service, model, deps } = engine
    const { session_id: sid } = await service.createSession('t1', {})
    scriptAgent(
      model,
      Array.from({ length: 5 }, (_, i) => ({
        text: `answer ${i}`,
        usage: { input_tokens: 1000 * (i + 1), output_tokens: 5 },
      })),
    )
    for (let n = 1; n <= 5; n++) await service.stepTurn('t1', sid, { input: `question ${n}` })
    expect(loads).toEqual([])
    // The anchor is the provider's count of the last request and the messages it carried.
    expect((await committed(deps, 't1', sid)).state.compaction?.usage_anchor).toEqual({
      input_tokens: 5000,
      message_count: 9,
    })
  })

  it('loads it near the threshold and counts only the messages the provider has not', async () => {
    const { service, model } = engine
    const { session_id: sid } = await service.createSession('t1', {
      // No artifact tools: their definitions alone would cross this small threshold.
      harness: { max_context_tokens: 2000, artifact_tools: false },
    })
    scriptAgent(model, [
      { text: 'a1', usage: { input_tokens: 1500, output_tokens: 5 } },
      { text: 'a2', usage: { input_tokens: 1550, output_tokens: 5 } },
    ])
    await service.stepTurn('t1', sid, { input: 'q1' })
    expect(loads).toEqual([])
    // 1,500 + the bound of two short messages (≥ soft 1,620 only with a long input).
    await service.stepTurn('t1', sid, { input: `q2 ${'x'.repeat(400)}` })
    expect(loads).toEqual(['gpt-4o-mini'])
    // Two messages counted (the answer and the new input), not the whole transcript.
    expect(counted).toBe(2)
  })
})
