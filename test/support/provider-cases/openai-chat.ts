import { expect } from 'vitest'
import { chatChunk, DONE, type ProviderCase } from '../provider-case.ts'

/**
 * OpenAI Chat Completions (api.openai.com/v1/chat/completions), streamed.
 *
 * Shapes: OpenAI API reference, "The chat completion chunk object"
 * (platform.openai.com/docs/api-reference/chat-streaming): `choices[].delta` with `role`,
 * `content`, `refusal`, `tool_calls[]` (index, id, type, function.name, function.arguments in
 * pieces); with `stream_options.include_usage` a last chunk with `choices: []` and `usage`
 * (`prompt_tokens_details.cached_tokens`, `completion_tokens_details.reasoning_tokens`). An error
 * inside a 200 stream is a data line `{"error": {"message", "type", "param", "code"}}`, as the
 * official SDK reads it (github.com/openai/openai-node, src/core/streaming.ts).
 */
const model = 'gpt-4.1-mini'
const client = { adapter: 'openai', provider: 'openai' } as const
const chunk = (fields: Omit<Parameters<typeof chatChunk>[0], 'model'>) =>
  chatChunk({ id: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', model, ...fields })
const usageChunk = (prompt: number, completion: number, cached = 0) =>
  chunk({
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
  })
const text = (pieces: string[], finish = 'stop') => [
  chunk({ delta: { role: 'assistant', content: '', refusal: null } }),
  ...pieces.map((content) => chunk({ delta: { content } })),
  chunk({ delta: {}, finish_reason: finish }),
]
const serverError = (code: string) => ({
  data: { error: { message: 'The server had an error', type: 'server_error', param: null, code } },
})

export const openaiChatCases: ProviderCase[] = [
  {
    name: 'text with the usage chunk after it (choices: []), cached tokens counted',
    source: 'Chat completion chunk object; stream_options.include_usage',
    client,
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: 'Hi',
        replies: [{ frames: [...text(['Hel', 'lo.']), usageChunk(2048, 3, 1920), DONE] }],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Hello.' }],
          requests: [
            {
              stream: true,
              stream_options: { include_usage: true },
              prompt_cache_key: expect.stringMatching(/^turnline-[0-9a-f]{16}$/),
            },
          ],
          usage: {
            input_tokens: 2048,
            cached_input_tokens: 1920,
            cache_creation_tokens: 0,
            output_tokens: 3,
          },
          // gpt-4.1-mini: $0.40 input, $0.10 cached input, $1.60 output per 1M tokens.
          session: {
            total_cost_usd: expect.closeTo(128 * 0.4e-6 + 1920 * 0.1e-6 + 3 * 1.6e-6, 12),
          },
        },
      },
    ],
  },
  {
    name: 'parallel tool calls: both invoked, both answered on the next request',
    source: 'Chat completion chunk object (tool_calls by index); function calling guide',
    client,
    model: { name: model, api: 'chat' },
    tools: ['get_weather'],
    turns: [
      {
        input: 'Weather in Paris and Oslo?',
        replies: [
          {
            frames: [
              chunk({ delta: { role: 'assistant', content: null } }),
              chunk({
                delta: {
                  tool_calls: [
                    {
                      index: 0,
                      id: 'call_paris',
                      type: 'function',
                      function: { name: 'get_weather', arguments: '' },
                    },
                  ],
                },
              }),
              chunk({ delta: { tool_calls: [{ index: 0, function: { arguments: '{"city"' } }] } }),
              chunk({
                delta: { tool_calls: [{ index: 0, function: { arguments: ':"Paris"}' } }] },
              }),
              chunk({
                delta: {
                  tool_calls: [
                    {
                      index: 1,
                      id: 'call_oslo',
                      type: 'function',
                      function: { name: 'get_weather', arguments: '' },
                    },
                  ],
                },
              }),
              chunk({
                delta: { tool_calls: [{ index: 1, function: { arguments: '{"city":"Oslo"}' } }] },
              }),
              chunk({ delta: {}, finish_reason: 'tool_calls' }),
              usageChunk(120, 40),
              DONE,
            ],
          },
          { frames: [...text(['Mild in both.']), usageChunk(200, 5), DONE] },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'tool_invocation', tool_call_id: 'call_paris', arguments: { city: 'Paris' } },
            { type: 'tool_output' },
            { type: 'tool_invocation', tool_call_id: 'call_oslo', arguments: { city: 'Oslo' } },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'Mild in both.' },
          ],
          // One cache key for every request of the session's segment.
          check: ([first, second]) => {
            expect(first?.prompt_cache_key).toMatch(/^turnline-/)
            expect(second?.prompt_cache_key).toBe(first?.prompt_cache_key)
          },
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  content: null,
                  tool_calls: [{ id: 'call_paris' }, { id: 'call_oslo' }],
                },
                { role: 'tool', tool_call_id: 'call_paris' },
                { role: 'tool', tool_call_id: 'call_oslo' },
              ],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'a refusal streams as the answer',
    source: 'Chat completion chunk object: delta.refusal',
    client,
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: 'Do something bad',
        replies: [
          {
            frames: [
              chunk({ delta: { role: 'assistant', content: null, refusal: '' } }),
              chunk({ delta: { refusal: "I can't help " } }),
              chunk({ delta: { refusal: 'with that.' } }),
              chunk({ delta: {}, finish_reason: 'stop' }),
              usageChunk(9, 6),
              DONE,
            ],
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: "I can't help with that." }],
        },
      },
    ],
  },
  {
    name: 'an in-stream server_error with an unknown code before any output is retried',
    source: 'SDK streaming: an `error` object in a data line; error `type` server_error',
    client,
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: 'Hi',
        replies: [
          { frames: [serverError('unexpected_upstream_fault')] },
          { frames: [...text(['Hi!']), usageChunk(5, 2), DONE] },
        ],
        expect: { status: 'completed', items: [{ type: 'agent_message', text: 'Hi!' }] },
      },
    ],
  },
  {
    name: 'a stream that breaks off inside a tool call fails the turn with the call failed, not run',
    source: 'Chat completion chunk object (a stream without finish_reason is cut short)',
    client,
    model: { name: model, api: 'chat' },
    tools: ['read_file'],
    turns: [
      {
        input: 'Read it',
        replies: [
          {
            frames: [
              chunk({ delta: { role: 'assistant', content: 'Reading. ' } }),
              chunk({
                delta: {
                  tool_calls: [
                    {
                      index: 0,
                      id: 'call_cut',
                      type: 'function',
                      function: { name: 'read_file', arguments: '{"pa' },
                    },
                  ],
                },
              }),
            ],
            cut: true,
          },
        ],
        expect: {
          status: 'failed',
          items: [
            { type: 'agent_message', text: 'Reading. ' },
            { type: 'tool_invocation', tool_call_id: 'call_cut', status: 'failed' },
          ],
        },
      },
    ],
  },
  {
    name: 'finish_reason length ends the answer as truncated',
    source: 'Chat completion chunk object: finish_reason "length"',
    client,
    model: { name: model, api: 'chat', max_output_tokens: 4 },
    turns: [
      {
        input: 'Count to ten',
        replies: [{ frames: [...text(['1, 2, 3'], 'length'), usageChunk(8, 4), DONE] }],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: '1, 2, 3' }],
          requests: [{ max_completion_tokens: 4 }],
        },
      },
    ],
  },
  {
    name: 'HTTP 429 with retry-after-ms is waited out and retried',
    source: 'OpenAI error codes guide (429 rate_limit_exceeded); SDK honours retry-after-ms',
    client,
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: 'Hi',
        replies: [
          {
            status: 429,
            headers: { 'retry-after-ms': '5' },
            body: {
              error: {
                message: 'Rate limit reached for gpt-4.1-mini',
                type: 'requests',
                param: null,
                code: 'rate_limit_exceeded',
              },
            },
          },
          { frames: [...text(['Hi.']), usageChunk(5, 2), DONE] },
        ],
        expect: { status: 'completed', items: [{ type: 'agent_message', text: 'Hi.' }] },
      },
    ],
  },
]
