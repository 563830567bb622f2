import { expect } from 'vitest'
import { chunkOf, end, type ProviderCase, toolCall } from '../provider-case.ts'

/**
 * OpenRouter and the local servers (Ollama, vLLM, LM Studio): OpenAI-compatible Chat
 * Completions with their own reasoning fields and usage habits.
 */

// --- OpenRouter (openrouter.ai/api/v1) ---------------------------------------------------------
// openrouter.ai/docs "Reasoning Tokens": `reasoning` deltas (and `reasoning_details`); "Usage
// Accounting": usage (with `cost`) in the last chunk; "Errors": an error during a stream is a
// chunk with `error: {code, message}` and `finish_reason: "error"`, after an HTTP 200.
const openrouter = chunkOf('anthropic/claude-sonnet-4.5', {
  id: 'gen-1760000000-abc',
  provider: 'Anthropic',
})
const openrouterClient = { adapter: 'openai', provider: 'openrouter' } as const

// --- Ollama (localhost:11434/v1) --------------------------------------------------------------
// docs.ollama.com "OpenAI compatibility": `reasoning` deltas for thinking models, tool calls
// whole in one chunk, no usage in a stream unless asked (and some versions send none at all).
const ollama = chunkOf('qwen3:8b', { id: 'chatcmpl-512', system_fingerprint: 'fp_ollama' })
const ollamaClient = { adapter: 'openai', provider: 'ollama' } as const

// --- vLLM --------------------------------------------------------------------------------------
// docs.vllm.ai "Reasoning Outputs": `reasoning_content` deltas (`reasoning` in newer releases);
// "OpenAI-Compatible Server": `stream_options.continuous_usage_stats` puts running usage in
// every chunk.
const vllm = chunkOf('moonshotai/Kimi-K2-Thinking', { id: 'chatcmpl-vllm-9f' })
const vllmClient = { adapter: 'openai', provider: 'vllm' } as const
const running = (prompt: number, completion: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
})

// --- LM Studio (localhost:1234/v1) --------------------------------------------------------------
// lmstudio.ai/docs "OpenAI Compatibility Endpoints": reasoning in `reasoning_content` when the
// server separates it; usage in the last chunk.
const lmstudio = chunkOf('openai/gpt-oss-20b', {
  id: 'chatcmpl-lms',
  system_fingerprint: 'gpt-oss-20b',
})
const lmstudioClient = { adapter: 'openai', provider: 'lmstudio' } as const

export const openrouterCases: ProviderCase[] = [
  {
    name: 'reasoning deltas go back in the reasoning field; usage from the final chunk',
    source: 'OpenRouter docs: Reasoning Tokens, Usage Accounting',
    client: openrouterClient,
    model: { name: 'anthropic/claude-sonnet-4.5', api: 'chat' },
    tools: ['ls'],
    turns: [
      {
        input: 'List',
        replies: [
          {
            frames: end([
              openrouter({ delta: { role: 'assistant', content: '', reasoning: 'Call ls.' } }),
              openrouter({ delta: toolCall('toolu_01A', 'ls', '{}') }),
              openrouter({
                delta: {},
                finish_reason: 'tool_calls',
                native_finish_reason: 'tool_use',
                usage: {
                  prompt_tokens: 400,
                  completion_tokens: 20,
                  total_tokens: 420,
                  cost: 0.0015,
                  prompt_tokens_details: { cached_tokens: 0 },
                },
              }),
            ]),
          },
          {
            frames: end([
              openrouter({ delta: { role: 'assistant', content: 'Two files.' } }),
              openrouter({
                delta: {},
                finish_reason: 'stop',
                usage: {
                  prompt_tokens: 450,
                  completion_tokens: 4,
                  total_tokens: 454,
                  prompt_tokens_details: { cached_tokens: 384 },
                },
              }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Call ls.' },
            { type: 'tool_invocation', tool_call_id: 'toolu_01A' },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'Two files.' },
          ],
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                { role: 'assistant', reasoning: 'Call ls.' },
                { role: 'tool' },
              ],
            },
          ],
          usage: {
            input_tokens: 850,
            cached_input_tokens: 384,
            cache_creation_tokens: 0,
            output_tokens: 24,
          },
        },
      },
    ],
  },
  {
    name: 'an error chunk after partial output fails the turn, nothing left open',
    source: 'OpenRouter docs: Errors (mid-stream errors)',
    client: openrouterClient,
    model: { name: 'anthropic/claude-sonnet-4.5', api: 'chat' },
    turns: [
      {
        input: 'Write',
        replies: [
          {
            frames: end([
              openrouter({ delta: { role: 'assistant', content: 'Once upon' } }),
              openrouter({
                delta: { content: '' },
                finish_reason: 'error',
                error: { code: 'server_error', message: 'Provider disconnected unexpectedly' },
              }),
            ]),
          },
        ],
        expect: {
          status: 'failed',
          failure: 'Provider disconnected unexpectedly',
          items: [{ type: 'agent_message', text: 'Once upon' }],
        },
      },
    ],
  },
]

export const ollamaCases: ProviderCase[] = [
  {
    name: 'no usage in the stream: estimated with the tokenizer and marked estimated',
    source: 'docs.ollama.com OpenAI compatibility (reasoning field, tool calls whole)',
    client: ollamaClient,
    model: { name: 'qwen3:8b', api: 'chat' },
    tools: ['read_file'],
    turns: [
      {
        input: 'Read notes.md please',
        replies: [
          {
            frames: end([
              ollama({ delta: { role: 'assistant', content: '', reasoning: 'Read it.' } }),
              ollama({
                delta: {
                  role: 'assistant',
                  content: '',
                  ...toolCall('call_k2x9', 'read_file', '{"path":"notes.md"}'),
                },
              }),
              ollama({ delta: { role: 'assistant', content: '' }, finish_reason: 'tool_calls' }),
            ]),
          },
          {
            frames: end([
              ollama({ delta: { role: 'assistant', content: 'It lists three tasks.' } }),
              ollama({ delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Read it.' },
            { type: 'tool_invocation', tool_call_id: 'call_k2x9' },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'It lists three tasks.' },
          ],
          // Ollama templates its `reasoning` field back into the prompt.
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                { role: 'assistant', reasoning: 'Read it.' },
                { role: 'tool' },
              ],
            },
          ],
          session: { estimated_tokens: expectPositive() },
        },
      },
    ],
  },
]

export const vllmCases: ProviderCase[] = [
  {
    name: 'running usage in every chunk: the last report counts once',
    source: 'docs.vllm.ai OpenAI-compatible server (continuous_usage_stats); reasoning outputs',
    client: vllmClient,
    model: { name: 'moonshotai/Kimi-K2-Thinking', api: 'chat' },
    turns: [
      {
        input: 'Hi',
        replies: [
          {
            frames: end([
              vllm({ delta: { role: 'assistant', content: '' }, usage: running(30, 0) }),
              vllm({ delta: { reasoning_content: 'Greet back.' }, usage: running(30, 3) }),
              vllm({ delta: { content: 'Hello!' }, usage: running(30, 5) }),
              vllm({ delta: {}, finish_reason: 'stop', usage: running(30, 6) }),
              vllm({ usage: running(30, 6) }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Greet back.' },
            { type: 'agent_message', text: 'Hello!' },
          ],
          usage: {
            input_tokens: 30,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 6,
          },
        },
      },
    ],
  },
  {
    name: 'reasoning_content goes back to the server that templates it',
    source: 'docs.vllm.ai reasoning outputs (Kimi-K2 / DeepSeek-R1 parsers)',
    client: vllmClient,
    model: { name: 'moonshotai/Kimi-K2-Thinking', api: 'chat' },
    tools: ['ls'],
    turns: [
      {
        input: 'List',
        replies: [
          {
            frames: end([
              vllm({ delta: { role: 'assistant', reasoning_content: 'Use ls.' } }),
              vllm({ delta: toolCall('chatcmpl-tool-81f', 'ls', '{}') }),
              vllm({ delta: {}, finish_reason: 'tool_calls' }),
              vllm({ usage: running(50, 9) }),
            ]),
          },
          {
            frames: end([
              vllm({ delta: { role: 'assistant', content: 'Empty.' } }),
              vllm({ delta: {}, finish_reason: 'stop' }),
              vllm({ usage: running(70, 2) }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning' },
            { type: 'tool_invocation' },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'Empty.' },
          ],
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                { role: 'assistant', reasoning_content: 'Use ls.' },
                { role: 'tool' },
              ],
            },
          ],
        },
      },
    ],
  },
]

export const lmstudioCases: ProviderCase[] = [
  {
    name: 'separated reasoning_content and usage in the last chunk',
    source: 'lmstudio.ai docs: OpenAI compatibility endpoints',
    client: lmstudioClient,
    model: { name: 'openai/gpt-oss-20b', api: 'chat' },
    turns: [
      {
        input: 'Hi',
        replies: [
          {
            frames: end([
              lmstudio({ delta: { role: 'assistant', reasoning_content: 'Say hi.' } }),
              lmstudio({ delta: { content: 'Hi there.' } }),
              lmstudio({ delta: {}, finish_reason: 'stop' }),
              lmstudio({ usage: { prompt_tokens: 70, completion_tokens: 9, total_tokens: 79 } }),
            ]),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Say hi.' },
            { type: 'agent_message', text: 'Hi there.' },
          ],
          usage: {
            input_tokens: 70,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 9,
          },
        },
      },
    ],
  },
]

/** A positive number (an estimate's exact value depends on the tokenizer). */
function expectPositive(): unknown {
  return expect.any(Number) as unknown
}
