import { expect } from 'vitest'
import { chunkOf, end, type ProviderCase } from '../provider-case.ts'
import { responsesStream } from './responses-frames.ts'

/**
 * Image input, family by family: a turn's `input_image` parts reach the provider in the format
 * of its API, and go back with the transcript on the next turn.
 *
 * Sources: OpenAI "Images and vision" guide (Chat `image_url` content parts with `url` and
 * `detail`; Responses `input_image` parts with `image_url` and `detail`); OpenRouter "Image
 * inputs" (the Chat format, any vision model behind it); vLLM "Multimodal inputs" (the Chat
 * format, `image_url` parts, for served vision models).
 */

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
const SHOT = 'https://example.com/screens/failing-login.png'
const INPUT = [
  { type: 'input_text' as const, text: 'Why does the login fail?' },
  { type: 'input_image' as const, image_url: PNG },
  { type: 'input_image' as const, image_url: SHOT, detail: 'low' as const },
]
const CHAT_USER = {
  role: 'user',
  content: [
    { type: 'text', text: 'Why does the login fail?' },
    { type: 'image_url', image_url: { url: PNG } },
    { type: 'image_url', image_url: { url: SHOT, detail: 'low' } },
  ],
}

/** A Chat case: the image turn, then a text turn that sends the images back. */
function chatCase(
  name: string,
  source: string,
  provider: 'openai' | 'openrouter' | 'vllm',
  model: string,
): ProviderCase {
  const chunk = chunkOf(model)
  const answer = (text: string) => ({
    frames: end([
      chunk({ delta: { role: 'assistant', content: text } }),
      chunk({ delta: {}, finish_reason: 'stop' }),
      chunk({ usage: { prompt_tokens: 900, completion_tokens: 4, total_tokens: 904 } }),
    ]),
  })
  return {
    name,
    source,
    client: { adapter: 'openai', provider },
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: INPUT,
        replies: [answer('The password is empty.')],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'The password is empty.' }],
          check: ([request]) => expect(request?.messages).toContainEqual(CHAT_USER),
        },
      },
      {
        input: 'Anything else?',
        replies: [answer('No.')],
        expect: {
          status: 'completed',
          check: ([request]) => {
            expect(request?.messages).toContainEqual(CHAT_USER)
            expect(request?.messages).toContainEqual({ role: 'user', content: 'Anything else?' })
          },
        },
      },
    ],
  }
}

export const imageInputCases: ProviderCase[] = [
  chatCase(
    'OpenAI Chat: image_url content parts, sent again with the transcript',
    'OpenAI Images and vision guide (Chat Completions)',
    'openai',
    'gpt-4.1-mini',
  ),
  chatCase(
    'OpenRouter: the Chat image format to a vision model behind it',
    'OpenRouter Image inputs',
    'openrouter',
    'google/gemini-2.5-flash',
  ),
  chatCase(
    'vLLM: the Chat image format to a served vision model',
    'vLLM Multimodal inputs (OpenAI-compatible server)',
    'vllm',
    'Qwen/Qwen2.5-VL-7B-Instruct',
  ),
  {
    name: 'OpenAI Responses: input_image parts with their detail',
    source: 'OpenAI Images and vision guide (Responses API)',
    client: { adapter: 'openai', provider: 'openai' },
    model: { name: 'gpt-5.4', api: 'responses' },
    turns: [
      {
        input: INPUT,
        replies: [
          {
            frames: responsesStream('gpt-5.4', [{ type: 'message', id: 'msg_1', text: 'Empty.' }], {
              input_tokens: 900,
              output_tokens: 2,
            }),
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Empty.' }],
          check: ([request]) =>
            expect(request?.input).toContainEqual({
              type: 'message',
              role: 'user',
              content: [
                { type: 'input_text', text: 'Why does the login fail?' },
                { type: 'input_image', image_url: PNG, detail: 'auto' },
                { type: 'input_image', image_url: SHOT, detail: 'low' },
              ],
            }),
        },
      },
    ],
  },
]
