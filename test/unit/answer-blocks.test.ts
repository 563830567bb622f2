import { describe, expect, it } from 'vitest'
import { toAnthropicTranscript } from '../../adapters/anthropic/messages-transcript.ts'
import { toResponsesInput } from '../../adapters/openai/responses-request.ts'
import { answerBlocks, answerOrder } from '../../src/contract/answer-blocks.ts'
import type { AssistantMessage } from '../../src/contract/history-message.ts'

/** The order of an answer's blocks: kept only when unusual, replayed by each adapter. */
const interleaved: AssistantMessage = {
  role: 'assistant',
  content: 'Looking.',
  tool_calls: [{ id: 'toolu_1', name: 'lookup', arguments: '{"key":"a"}' }],
  reasoning: [
    { type: 'anthropic_thinking', thinking: 'First.', signature: 'sig-1' },
    { type: 'openai_reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc-1' },
    { type: 'anthropic_thinking', thinking: 'Second.', signature: 'sig-2' },
  ],
  order: ['reasoning', 'reasoning', 'text', 'reasoning', 'tool_call'],
}

describe('answer blocks', () => {
  it('keeps no order for the usual one: reasoning, then text, then tool calls', () => {
    expect(answerOrder(['reasoning', 'reasoning', 'text', 'tool_call', 'tool_call'])).toBe(
      undefined,
    )
    expect(answerOrder(['text', 'tool_call'])).toBe(undefined)
    expect(answerOrder(['reasoning', 'text', 'reasoning'])).toEqual([
      'reasoning',
      'text',
      'reasoning',
    ])
    expect(answerOrder(['tool_call', 'text'])).toEqual(['tool_call', 'text'])
  })

  it('lists the blocks in the kept order; what the order does not name follows as usual', () => {
    expect(answerBlocks(interleaved).map((block) => block.kind)).toEqual([
      'reasoning',
      'reasoning',
      'text',
      'reasoning',
      'tool_call',
    ])
    const short = { ...interleaved, order: ['text', 'reasoning'] as AssistantMessage['order'] }
    expect(answerBlocks(short).map((block) => block.kind)).toEqual([
      'text',
      'reasoning',
      'reasoning',
      'reasoning',
      'tool_call',
    ])
    const { order: _order, ...usual } = interleaved
    expect(answerBlocks(usual).map((block) => block.kind)).toEqual([
      'reasoning',
      'reasoning',
      'reasoning',
      'text',
      'tool_call',
    ])
  })

  it('each adapter replays its own blocks in that order and leaves out the others', () => {
    const claude = toAnthropicTranscript([{ role: 'user', content: 'Go' }, interleaved])
    expect(claude.messages[1]?.content).toEqual([
      { type: 'thinking', thinking: 'First.', signature: 'sig-1' },
      { type: 'text', text: 'Looking.' },
      { type: 'thinking', thinking: 'Second.', signature: 'sig-2' },
      { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { key: 'a' } },
    ])
    expect(toResponsesInput(interleaved).map((item) => item.type)).toEqual([
      'reasoning',
      'message',
      'function_call',
    ])
  })
})
