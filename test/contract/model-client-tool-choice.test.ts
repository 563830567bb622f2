import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createAnthropicModelClient } from '../../adapters/anthropic/anthropic-model-client.ts'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import type {
  ModelApi,
  ModelClient,
  ModelRequest,
  ModelStreamEvent,
} from '../../src/ports/model-client.ts'
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'

/**
 * `tool_choice` and `parallel_tool_calls` as each adapter sends them: the Chat Completions and
 * Responses APIs against the mock OpenAI API, the Messages API against the mock Anthropic API.
 * Both mocks refuse (400, and fail the test) what the real APIs refuse: a choice without tools,
 * a named tool that is not offered, an unknown shape, a forced choice while Claude thinks.
 */
let openai: MockOpenAI
let anthropic: MockAnthropic
let claude: ModelClient

beforeAll(async () => {
  openai = await startMockOpenAI()
  anthropic = await startMockAnthropic()
  claude = createAnthropicModelClient({
    baseURL: anthropic.baseURL,
    apiKey: 'sk-ant-contract',
    maxRetries: 0,
  })
})
afterEach(() => {
  try {
    openai.assertDone()
    anthropic.assertDone()
  } finally {
    openai.reset()
    anthropic.reset()
  }
})
afterAll(async () => {
  await openai.close()
  await anthropic.close()
})

const WEATHER = {
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
}
const OTHER = { name: 'get_time', description: 'Time of a city', parameters: { type: 'object' } }

function request(api: ModelApi, fields: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: api === 'anthropic' ? 'claude-opus-4-5' : 'gpt-4o-mini',
    api,
    messages: [{ role: 'user', content: 'Weather in Paris?' }],
    tools: [WEATHER, OTHER],
    ...fields,
  }
}

async function run(client: ModelClient, req: ModelRequest): Promise<ModelStreamEvent[]> {
  const events: ModelStreamEvent[] = []
  for await (const event of client.stream(req)) events.push(event)
  return events
}

const openaiClient = () =>
  createOpenAIModelClient({ apiKey: 'sk-test', baseURL: openai.baseURL, maxRetries: 0 })

describe.each(['chat', 'responses'] as const)('OpenAI %s', (api) => {
  const named =
    api === 'chat'
      ? { type: 'function', function: { name: 'get_weather' } }
      : {
          type: 'function',
          name: 'get_weather',
        }

  it.each([
    ['none', 'none'],
    ['required', 'required'],
    [{ name: 'get_weather' }, named],
  ] as const)('tool_choice %j is sent as %j', async (choice, sent) => {
    openai.enqueue({ api, text: 'ok' })
    await run(openaiClient(), request(api, { toolChoice: choice }))
    expect(openai.requests[0]?.body.tool_choice).toEqual(sent)
    expect(openai.requests[0]?.body).not.toHaveProperty('parallel_tool_calls')
  })

  it('parallel_tool_calls: false is sent beside the tools', async () => {
    openai.enqueue({ api, text: 'ok' })
    await run(openaiClient(), request(api, { parallelToolCalls: false }))
    expect(openai.requests[0]?.body.parallel_tool_calls).toBe(false)
    expect(openai.requests[0]?.body).not.toHaveProperty('tool_choice')
  })

  it('neither is sent without tools (the API refuses them there)', async () => {
    openai.enqueue({ api, text: 'ok' })
    await run(
      openaiClient(),
      request(api, { tools: [], toolChoice: 'required', parallelToolCalls: false }),
    )
    expect(openai.requests[0]?.body).not.toHaveProperty('tool_choice')
    expect(openai.requests[0]?.body).not.toHaveProperty('parallel_tool_calls')
  })
})

describe('Anthropic Messages', () => {
  it.each([
    ['none', undefined, { type: 'none' }],
    ['required', undefined, { type: 'any' }],
    [{ name: 'get_weather' }, undefined, { type: 'tool', name: 'get_weather' }],
    ['required', false, { type: 'any', disable_parallel_tool_use: true }],
    [
      { name: 'get_time' },
      false,
      { type: 'tool', name: 'get_time', disable_parallel_tool_use: true },
    ],
    [undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ['none', false, { type: 'none' }],
  ] as const)('tool_choice %j, parallel %j → %j', async (choice, parallel, sent) => {
    anthropic.enqueue({ text: 'ok' })
    await run(
      claude,
      request('anthropic', {
        ...(choice === undefined ? {} : { toolChoice: choice }),
        ...(parallel === undefined ? {} : { parallelToolCalls: parallel }),
      }),
    )
    expect(anthropic.requests[0]?.body.tool_choice).toEqual(sent)
  })

  it('nothing is sent when the model chooses and may call several tools', async () => {
    anthropic.enqueue({ text: 'ok' })
    await run(claude, request('anthropic'))
    expect(anthropic.requests[0]?.body).not.toHaveProperty('tool_choice')
  })

  it('a forced choice while the model thinks is refused before any request, saying why', async () => {
    const refused = run(
      claude,
      request('anthropic', { toolChoice: 'required', reasoningEffort: 'high' }),
    )
    await expect(refused).rejects.toMatchObject({
      code: 'model_error',
      message: expect.stringContaining('cannot force a tool call while the model thinks'),
    })
    expect(anthropic.requests).toHaveLength(0)
  })

  it('none while the model thinks is sent', async () => {
    anthropic.enqueue({ text: 'ok' })
    await run(claude, request('anthropic', { toolChoice: 'none', reasoningEffort: 'high' }))
    expect(anthropic.requests[0]?.body.tool_choice).toEqual({ type: 'none' })
  })
})
