import { describe, expect, it } from 'vitest'
import { messagesRequestBody } from '../../adapters/anthropic/messages-request.ts'
import { toolInput } from '../../adapters/anthropic/messages-transcript.ts'
import {
  takesThinkingBudget,
  thinkingSettings,
} from '../../adapters/anthropic/thinking-settings.ts'
import { parseEnv } from '../../functions/env-config.ts'
import { chooseModel } from '../../functions/model-choice.ts'
import { ModelSettingsSchema } from '../../src/contract/model-config.ts'
import type { ModelRequest } from '../../src/ports/model-client.ts'

const request = (fields: Partial<ModelRequest> = {}): ModelRequest => ({
  model: 'claude-opus-4-7',
  api: 'anthropic',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  ...fields,
})

describe('Anthropic thinking settings', () => {
  it.each([
    ['claude-3-7-sonnet-20250219', true],
    ['claude-sonnet-4-20250514', true],
    ['claude-opus-4-1', true],
    ['claude-sonnet-4-5', true],
    ['anthropic.claude-haiku-4-5-20251001-v1:0', true],
    ['claude-opus-4-5@20251101', true],
    ['claude-opus-4-6', false],
    ['claude-sonnet-4-6', false],
    ['us.anthropic.claude-opus-4-7', false],
    ['claude-opus-5', false],
    ['claude-fable-5-1', false],
  ])('%s takes a thinking budget: %s', (model, budget) => {
    expect(takesThinkingBudget(model)).toBe(budget)
  })

  it('maps effort to a budget below max_tokens, or to adaptive thinking at an effort', () => {
    expect(
      thinkingSettings(request({ model: 'claude-sonnet-4-5', reasoningEffort: 'high' })),
    ).toEqual({
      max_tokens: 32_000,
      thinking: { type: 'enabled', budget_tokens: 24_576 },
    })
    expect(
      thinkingSettings(
        request({ model: 'claude-sonnet-4-5', reasoningEffort: 'xhigh', maxOutputTokens: 8_000 }),
      ),
    ).toEqual({ max_tokens: 8_000, thinking: { type: 'enabled', budget_tokens: 7_999 } })
    expect(
      thinkingSettings(request({ reasoningEffort: 'minimal', reasoningSummary: 'auto' })),
    ).toEqual({
      max_tokens: 32_000,
      thinking: { type: 'adaptive', display: 'summarized' },
      output_config: { effort: 'low' },
    })
    expect(thinkingSettings(request({ reasoningEffort: 'none' }))).toEqual({
      max_tokens: 32_000,
      thinking: { type: 'disabled' },
    })
    expect(thinkingSettings(request({ model: 'claude-3-5-haiku-20241022' }))).toEqual({
      max_tokens: 4_096,
    })
  })

  it('sends the output schema beside the effort in output_config', () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } } }
    const body = messagesRequestBody(request({ reasoningEffort: 'high', outputSchema: schema }))
    expect(body.output_config).toEqual({
      effort: 'high',
      format: { type: 'json_schema', schema },
    })
  })

  it('refuses sampling parameters, which the API version refuses', () => {
    expect(() => messagesRequestBody(request({ temperature: 0.3 }))).toThrow(/temperature/)
    const settings = ModelSettingsSchema.safeParse({ api: 'anthropic', top_p: 0.9 })
    expect(settings.error?.issues).toMatchObject([{ path: ['top_p'] }])
    expect(ModelSettingsSchema.safeParse({ api: 'chat', top_p: 0.9 }).success).toBe(true)
  })
})

describe('Anthropic transcript', () => {
  it('sends leading system messages as system blocks and later ones as user text', () => {
    const body = messagesRequestBody(
      request({
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'system', content: '[memory envelope]' },
          { role: 'user', content: 'first' },
          { role: 'system', content: 'Previous conversation summary: …' },
          { role: 'user', content: 'second' },
        ],
      }),
    )
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: '[memory envelope]' },
    ])
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'first' },
          { type: 'text', text: 'Previous conversation summary: …' },
          { type: 'text', text: 'second', cache_control: { type: 'ephemeral' } },
        ],
      },
    ])
  })

  it('puts tool results first in their message, before text the transcript holds between', () => {
    const call = { id: 'toolu_1', name: 'read_file', arguments: '{}' }
    const body = messagesRequestBody(
      request({
        messages: [
          { role: 'user', content: 'go' },
          { role: 'assistant', content: '', tool_calls: [call] },
          { role: 'user', content: 'also check the tests' },
          { role: 'tool', tool_call_id: 'toolu_1', content: 'ok' },
        ],
      }),
    )
    expect(body.messages.at(-1)).toMatchObject({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1' },
        { type: 'text', text: 'also check the tests' },
      ],
    })
  })

  it("sends a user message's images as image blocks after its text", () => {
    const body = messagesRequestBody(
      request({
        messages: [
          {
            role: 'user',
            content: 'What is wrong here?',
            images: [
              { url: 'data:image/png;base64,iVBORw0KGgo=' },
              { url: 'https://example.com/screenshot.webp', detail: 'high' },
            ],
          },
        ],
      }),
    )
    expect(body.messages[0]?.content).toEqual([
      { type: 'text', text: 'What is wrong here?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      {
        type: 'image',
        source: { type: 'url', url: 'https://example.com/screenshot.webp' },
        cache_control: { type: 'ephemeral' },
      },
    ])
  })

  it('refuses an OpenAI compaction item', () => {
    expect(() =>
      messagesRequestBody(
        request({
          messages: [
            { role: 'compaction', content: '', provider: 'openai', encrypted_content: 'x' },
            { role: 'user', content: 'hi' },
          ],
        }),
      ),
    ).toThrow(/compaction item/)
  })

  it('sends arguments back as an input object, {} when they are not one', () => {
    expect(toolInput('{"path":"a.txt"}')).toEqual({ path: 'a.txt' })
    expect(toolInput('{"path":"a.t')).toEqual({})
    expect(toolInput('[1]')).toEqual({})
    expect(toolInput('')).toEqual({})
  })
})

describe('model choice with Anthropic', () => {
  const fetchImpl: typeof fetch = (...args) => fetch(...args)

  it('defaults to api "anthropic" when only Anthropic is configured', async () => {
    const { choice } = await chooseModel(
      parseEnv({ ANTHROPIC_API_KEY: 'sk-ant-x', TURNLINE_MODEL: 'claude-sonnet-4-6' }),
      fetchImpl,
    )
    expect(choice).toMatchObject({
      provider: 'anthropic',
      api: 'anthropic',
      baseURL: 'https://api.anthropic.com',
    })
    expect(choice.notice).toMatch(/via https:\/\/api\.anthropic\.com \(Anthropic Messages API/)
  })

  it('keeps the OpenAI default with both, and routes each session by its api', async () => {
    const { choice, client } = await chooseModel(
      parseEnv({ ANTHROPIC_API_KEY: 'sk-ant-x', OPENAI_API_KEY: 'sk-x' }),
      fetchImpl,
    )
    expect(choice).toMatchObject({ provider: 'openai', api: 'chat' })
    expect(choice.notice).toMatch(/and for api "anthropic" via https:\/\/api\.anthropic\.com/)
    expect(client.compact).toBeTypeOf('function')
  })

  it('fails an anthropic session where only OpenAI is configured, naming the variable', async () => {
    const { client } = await chooseModel(parseEnv({ OPENAI_API_KEY: 'sk-x' }), fetchImpl)
    const pull = async () => {
      for await (const _ of client.stream(request())) break
    }
    await expect(pull()).rejects.toMatchObject({
      code: 'model_not_configured',
      message: expect.stringMatching(/ANTHROPIC_API_KEY/),
    })
  })
})
