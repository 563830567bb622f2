import { expect } from 'vitest'
import { chunkOf, end, type ProviderCase, toolCall } from '../provider-case.ts'

/**
 * Mistral, xAI, Qwen and Groq: hosted OpenAI-compatible Chat Completions with their own stream
 * shapes. Each case names its source; the helpers only build the common chunk envelope.
 */

// --- Mistral (api.mistral.ai) -------------------------------------------------------------
// Envelope and usage on the finishing chunk: public recording of the streaming API
// (github.com/M-Lai-ai/LLM-Provider-reference, Mistral/streaming.md). Reasoning models
// (Magistral) stream `content` as a list of chunks: `{"type":"thinking","thinking":[{"type":
// "text","text":…}]}` then `{"type":"text","text":…}` (docs.mistral.ai/capabilities/reasoning).
// Tool calls arrive whole in one chunk with 9-character ids (docs.mistral.ai/capabilities/
// function_calling).
const mistral = chunkOf('magistral-medium-2509', { id: 'f798ebd5c41a45d88bb079635121cade' })
const mistralClient = { adapter: 'openai', provider: 'mistral' } as const
const mistralUsage = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  total_tokens: prompt + completion,
  completion_tokens: completion,
})

// --- xAI (api.x.ai) --------------------------------------------------------------------------
// docs.x.ai "Reasoning" guide: `reasoning_content` deltas (grok-3-mini); usage with
// `completion_tokens_details.reasoning_tokens`, where `completion_tokens` counts the answer only
// and `total_tokens` = prompt + completion + reasoning; `prompt_tokens_details.cached_tokens`.
const xai = chunkOf('grok-3-mini', { id: 'c2b1a9e0-xai', system_fingerprint: 'fp_6ca3f4b5c6' })
const xaiClient = { adapter: 'openai', provider: 'xai' } as const

// --- Qwen (dashscope(-intl).aliyuncs.com/compatible-mode/v1) ---------------------------------
// Alibaba Model Studio, "Deep thinking" (help.aliyun.com/zh/model-studio/deep-thinking):
// `reasoning_content` deltas, then `content`; with `stream_options.include_usage` a last chunk
// with `choices: []` and `usage` (`prompt_tokens_details.cached_tokens` for context cache).
const qwen = chunkOf('qwen3-max', { id: 'chatcmpl-4a0f-qwen' })
const qwenClient = { adapter: 'openai', provider: 'qwen' } as const

// --- Groq (api.groq.com/openai/v1) -----------------------------------------------------------
// console.groq.com/docs/reasoning: with `reasoning_format: "parsed"` the delta carries
// `reasoning`; Groq's streaming API reference: usage of a stream comes in the last chunk's
// `x_groq.usage` (beside queue_time / prompt_time); Groq rejects unknown message properties, so
// the reasoning must not go back.
const groq = chunkOf('openai/gpt-oss-120b', {
  id: 'chatcmpl-groq-7c1',
  system_fingerprint: 'fp_a5',
})
const groqClient = { adapter: 'openai', provider: 'groq' } as const

export const mistralCases: ProviderCase[] = [
  {
    name: 'Magistral thinking and text content parts: reasoning item, plain answer, nothing odd sent back',
    source: 'docs.mistral.ai/capabilities/reasoning; streaming recording named in the file',
    client: mistralClient,
    model: { name: 'magistral-medium-2509', api: 'chat' },
    turns: [
      {
        input: 'Is 97 prime?',
        replies: [
          {
            frames: end([
              mistral({ delta: { role: 'assistant', content: '' } }),
              mistral({
                delta: {
                  content: [
                    {
                      type: 'thinking',
                      thinking: [{ type: 'text', text: 'Check divisors up to 9.' }],
                    },
                  ],
                },
              }),
              mistral({ delta: { content: [{ type: 'text', text: 'Yes, 97 ' }] } }),
              mistral({ delta: { content: 'is prime.' } }),
              mistral({
                delta: { content: '' },
                finish_reason: 'stop',
                usage: mistralUsage(20, 30),
              }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Check divisors up to 9.' },
            { type: 'agent_message', text: 'Yes, 97 is prime.' },
          ],
          usage: {
            input_tokens: 20,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 30,
          },
        },
      },
      {
        input: 'And 91?',
        replies: [
          {
            frames: end([
              mistral({ delta: { role: 'assistant', content: 'No: 7 × 13.' } }),
              mistral({
                delta: { content: '' },
                finish_reason: 'stop',
                usage: mistralUsage(40, 8),
              }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'No: 7 × 13.' }],
          requests: [
            {
              messages: [
                { role: 'user' },
                { role: 'assistant', content: 'Yes, 97 is prime.' },
                { role: 'user', content: 'And 91?' },
              ],
            },
          ],
          check: ([request]) => expect(JSON.stringify(request)).not.toMatch(/thinking|reasoning/),
        },
      },
    ],
  },
  {
    name: 'a whole tool call in one chunk, usage on the finishing chunk',
    source: 'docs.mistral.ai/capabilities/function_calling; streaming recording',
    client: mistralClient,
    model: { name: 'mistral-large-latest', api: 'chat' },
    tools: ['retrieve_payment_status'],
    turns: [
      {
        input: 'Status of T1001?',
        replies: [
          {
            frames: end([
              mistral({ delta: { role: 'assistant', content: '' } }),
              mistral({
                delta: {
                  content: '',
                  ...toolCall(
                    'D681PevKs',
                    'retrieve_payment_status',
                    '{"transaction_id": "T1001"}',
                  ),
                },
              }),
              mistral({
                delta: { content: '' },
                finish_reason: 'tool_calls',
                usage: mistralUsage(150, 30),
              }),
            ]),
          },
          {
            frames: end([
              mistral({ delta: { role: 'assistant', content: 'It is paid.' } }),
              mistral({
                delta: { content: '' },
                finish_reason: 'stop',
                usage: mistralUsage(200, 5),
              }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            {
              type: 'tool_invocation',
              tool_call_id: 'D681PevKs',
              arguments: { transaction_id: 'T1001' },
            },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'It is paid.' },
          ],
          usage: {
            input_tokens: 350,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 35,
          },
        },
      },
    ],
  },
]

export const xaiCases: ProviderCase[] = [
  {
    name: 'reasoning tokens left out of completion_tokens are added to the output',
    source: 'docs.x.ai reasoning guide (usage fields of grok-3-mini)',
    client: xaiClient,
    model: { name: 'grok-3-mini', api: 'chat' },
    turns: [
      {
        input: '101 * 3?',
        replies: [
          {
            frames: end([
              xai({ delta: { role: 'assistant', reasoning_content: '101 times 3 ' } }),
              xai({ delta: { reasoning_content: 'is 303.' } }),
              xai({ delta: { content: '303' } }),
              xai({ delta: {}, finish_reason: 'stop' }),
              xai({
                usage: {
                  prompt_tokens: 12,
                  completion_tokens: 1,
                  total_tokens: 213,
                  prompt_tokens_details: { text_tokens: 12, cached_tokens: 8 },
                  completion_tokens_details: { reasoning_tokens: 200 },
                  num_sources_used: 0,
                },
              }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: '101 times 3 is 303.' },
            { type: 'agent_message', text: '303' },
          ],
          usage: {
            input_tokens: 12,
            cached_input_tokens: 8,
            cache_creation_tokens: 0,
            output_tokens: 201,
          },
          session: { reasoning_tokens: 200 },
        },
      },
    ],
  },
]

export const qwenCases: ProviderCase[] = [
  {
    name: 'deep thinking, a tool call, and the usage chunk with no choices',
    source: 'help.aliyun.com/zh/model-studio/deep-thinking; compatible-mode streaming',
    client: qwenClient,
    model: { name: 'qwen3-max', api: 'chat' },
    tools: ['get_time'],
    turns: [
      {
        input: 'What time is it in Beijing?',
        replies: [
          {
            frames: end([
              qwen({
                delta: { role: 'assistant', content: '', reasoning_content: 'Use get_time.' },
              }),
              qwen({ delta: toolCall('call_b0b2a6ee', 'get_time', '{"tz": "Asia/Shanghai"}') }),
              qwen({ delta: {}, finish_reason: 'tool_calls' }),
              qwen({
                usage: {
                  prompt_tokens: 260,
                  completion_tokens: 24,
                  total_tokens: 284,
                  prompt_tokens_details: { cached_tokens: 128 },
                  completion_tokens_details: { reasoning_tokens: 6 },
                },
              }),
            ]),
          },
          {
            frames: end([
              qwen({ delta: { content: 'It is noon.' } }),
              qwen({ delta: {}, finish_reason: 'stop' }),
              qwen({ usage: { prompt_tokens: 300, completion_tokens: 4, total_tokens: 304 } }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Use get_time.' },
            { type: 'tool_invocation', tool_call_id: 'call_b0b2a6ee' },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'It is noon.' },
          ],
          usage: {
            input_tokens: 560,
            cached_input_tokens: 128,
            cache_creation_tokens: 0,
            output_tokens: 28,
          },
        },
      },
    ],
  },
]

export const groqCases: ProviderCase[] = [
  {
    name: 'reasoning field and x_groq usage; the reasoning does not go back',
    source: 'console.groq.com/docs/reasoning; Groq API reference (x_groq on streamed chunks)',
    client: groqClient,
    model: { name: 'openai/gpt-oss-120b', api: 'chat' },
    tools: ['search'],
    turns: [
      {
        input: 'Find the docs',
        replies: [
          {
            frames: end([
              groq({
                delta: { role: 'assistant', content: null, reasoning: 'Search first.' },
                x_groq: { id: 'req_01k' },
              }),
              groq({ delta: toolCall('fc_0e2b', 'search', '{"q":"docs"}') }),
              groq({
                delta: {},
                finish_reason: 'tool_calls',
                x_groq: {
                  id: 'req_01k',
                  usage: {
                    queue_time: 0.02,
                    prompt_tokens: 180,
                    prompt_time: 0.01,
                    completion_tokens: 22,
                    completion_time: 0.05,
                    total_tokens: 202,
                  },
                },
              }),
            ]),
          },
          {
            frames: end([
              groq({ delta: { role: 'assistant', content: 'Found them.' } }),
              groq({
                delta: {},
                finish_reason: 'stop',
                x_groq: {
                  id: 'req_02k',
                  usage: { prompt_tokens: 230, completion_tokens: 3, total_tokens: 233 },
                },
              }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Search first.' },
            { type: 'tool_invocation', tool_call_id: 'fc_0e2b' },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'Found them.' },
          ],
          usage: {
            input_tokens: 410,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 25,
          },
          check: ([, second]) => expect(JSON.stringify(second?.messages)).not.toMatch(/"reasoning/),
        },
      },
    ],
  },
]
