import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import type { ModelApi, ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

/** Reasoning effort, reasoning summaries and sampling settings on both OpenAI APIs. */
let mock: MockOpenAI

beforeAll(async () => {
  mock = await startMockOpenAI()
})
afterEach(() => {
  try {
    mock.assertDone()
  } finally {
    mock.reset()
  }
})
afterAll(async () => {
  await mock.close()
})

const client = () => createOpenAIModelClient({ apiKey: 'sk-test', baseURL: mock.baseURL })

function request(api: ModelApi, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: 'o4-mini', api, messages: [{ role: 'user', content: 'Hi' }], tools: [], ...extra }
}

async function run(req: ModelRequest) {
  const events: ModelStreamEvent[] = []
  for await (const event of client().stream(req)) events.push(event)
  const last = events.at(-1)
  if (last?.type !== 'completed') throw new Error('no completed event')
  return { events, response: last.response }
}

const sampling = { temperature: 0.3, topP: 0.9, maxOutputTokens: 512 } as const

describe('effort and sampling', () => {
  it('chat: reasoning_effort, temperature, top_p and max_completion_tokens', async () => {
    mock.enqueue({ api: 'chat', text: 'ok' })
    await run(request('chat', { ...sampling, reasoningEffort: 'minimal' }))
    expect(mock.requests[0]?.body).toMatchObject({
      reasoning_effort: 'minimal',
      temperature: 0.3,
      top_p: 0.9,
      max_completion_tokens: 512,
    })
    expect(mock.requests[0]?.body).not.toHaveProperty('reasoning')
  })

  it('responses: reasoning.effort and .summary, temperature, top_p and max_output_tokens', async () => {
    mock.enqueue({ api: 'responses', text: 'ok' })
    await run(
      request('responses', { ...sampling, reasoningEffort: 'none', reasoningSummary: 'auto' }),
    )
    expect(mock.requests[0]?.body).toMatchObject({
      reasoning: { effort: 'none', summary: 'auto' },
      temperature: 0.3,
      top_p: 0.9,
      max_output_tokens: 512,
    })
    expect(mock.requests[0]?.body).not.toHaveProperty('reasoning_effort')
  })

  it('sends none of them when unset', async () => {
    mock.enqueue({ api: 'chat', text: 'ok' }, { api: 'responses', text: 'ok' })
    await run(request('chat'))
    await run(request('responses'))
    for (const sent of mock.requests) {
      for (const field of ['reasoning', 'reasoning_effort', 'temperature', 'top_p']) {
        expect(sent.body).not.toHaveProperty(field)
      }
    }
  })

  it.each(['chat', 'responses'] as const)(
    '%s: reasoning streams apart from the answer; reasoning tokens come with usage',
    async (api) => {
      mock.enqueue({
        api,
        reasoning: 'Weigh the options.',
        text: 'Done.',
        usage: { input_tokens: 10, output_tokens: 40, reasoning_tokens: 32 },
      })
      const { events, response } = await run(request(api, { reasoningEffort: 'high' }))
      const thoughts = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : []))
      expect(thoughts.join('')).toBe('Weigh the options.')
      expect(response).toMatchObject({ reasoning: 'Weigh the options.', reasoningTokens: 32 })
      expect(response.usage.output_tokens).toBe(40)
    },
  )
})
