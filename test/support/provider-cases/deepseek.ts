import { expect } from 'vitest'
import { chatChunk, DONE, type ProviderCase } from '../provider-case.ts'

/**
 * DeepSeek (api.deepseek.com), Chat Completions in thinking mode.
 *
 * Shapes: DeepSeek API docs, "Thinking Mode" guide (api-docs.deepseek.com/guides/thinking_mode):
 * `reasoning_content` beside `content` in the delta; in a tool loop the assistant message's
 * `reasoning_content` must be sent back on every later request, or the API answers 400 ("The
 * reasoning_content in the thinking mode must be passed back to the API"). Chunk envelope
 * (`system_fingerprint`, `logprobs: null`, a first delta `{role, content: null,
 * reasoning_content: ""}`) and the usage fields (`prompt_cache_hit_tokens`,
 * `prompt_cache_miss_tokens`, `prompt_tokens_details.cached_tokens`,
 * `completion_tokens_details.reasoning_tokens`) as in public recordings of deepseek-reasoner
 * (github.com/opensolon/solon, solon-ai features/ai/DeepSeek.md; github.com/CaiZongyuan/
 * agentscope-nextjs-ai-demo, backend/docs/example-completions.md) and the API reference
 * (api-docs.deepseek.com/api/create-chat-completion).
 */
const model = 'deepseek-v4-pro'
const client = { adapter: 'openai', provider: 'deepseek' } as const
const envelope = { model, system_fingerprint: 'fp_ffc7281d48_prod0820_fp8_kvcache' }
const chunk = (fields: Omit<Parameters<typeof chatChunk>[0], 'model'>) => {
  const frame = chatChunk({ ...envelope, ...fields })
  const choice = (frame.data.choices as Record<string, unknown>[])[0]
  if (choice) choice.logprobs = null
  return frame
}
const usage = (prompt: number, completion: number, hit: number, reasoning: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  prompt_tokens_details: { cached_tokens: hit },
  completion_tokens_details: { reasoning_tokens: reasoning },
  prompt_cache_hit_tokens: hit,
  prompt_cache_miss_tokens: prompt - hit,
})

/** A thinking-mode answer that calls one tool. */
const toolCallReply = (thinking: string[], call: { id: string; name: string; args: string[] }) => ({
  frames: [
    chunk({ delta: { role: 'assistant', content: null, reasoning_content: '' } }),
    ...thinking.map((piece) => chunk({ delta: { content: null, reasoning_content: piece } })),
    chunk({
      delta: {
        tool_calls: [
          {
            index: 0,
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      },
    }),
    ...call.args.map((piece) =>
      chunk({ delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }),
    ),
    chunk({ delta: { content: '' }, finish_reason: 'tool_calls', usage: usage(310, 64, 256, 41) }),
    DONE,
  ],
})

const answerReply = (thinking: string, answer: string[]) => ({
  frames: [
    chunk({ delta: { role: 'assistant', content: null, reasoning_content: '' } }),
    chunk({ delta: { content: null, reasoning_content: thinking } }),
    ...answer.map((piece) => chunk({ delta: { content: piece, reasoning_content: null } })),
    chunk({ delta: { content: '' }, finish_reason: 'stop', usage: usage(420, 30, 384, 12) }),
    DONE,
  ],
})

const WEATHER_THOUGHT = ['The user asks about tomorrow. ', 'I should call get_weather.']

export const deepseekCases: ProviderCase[] = [
  {
    name: 'thinking mode: a tool call’s reasoning_content goes back on the follow-up request',
    source: 'DeepSeek Thinking Mode guide, "Tool Calls" section; recordings named in the file',
    client,
    model: { name: model, api: 'chat' },
    tools: ['get_weather'],
    turns: [
      {
        input: 'Weather in Hangzhou tomorrow?',
        replies: [
          toolCallReply(WEATHER_THOUGHT, {
            id: 'call_00_Xk1',
            name: 'get_weather',
            args: ['{"location":', '"Hangzhou"}'],
          }),
          answerReply('It is cloudy, I will say so.', ['Cloudy, ', '7–13 °C.']),
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: WEATHER_THOUGHT.join('') },
            { type: 'tool_invocation', tool_name: 'get_weather', tool_call_id: 'call_00_Xk1' },
            { type: 'tool_output', status: 'completed' },
            { type: 'reasoning', text: 'It is cloudy, I will say so.' },
            { type: 'agent_message', text: 'Cloudy, 7–13 °C.' },
          ],
          requests: [
            { model, stream: true },
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  content: null,
                  reasoning_content: WEATHER_THOUGHT.join(''),
                  tool_calls: [{ id: 'call_00_Xk1', function: { name: 'get_weather' } }],
                },
                { role: 'tool', tool_call_id: 'call_00_Xk1' },
              ],
            },
          ],
          // prompt_cache_hit_tokens / prompt_tokens_details.cached_tokens; reasoning inside completion.
          usage: {
            input_tokens: 730,
            cached_input_tokens: 640,
            cache_creation_tokens: 0,
            output_tokens: 94,
          },
        },
      },
      {
        input: 'And the day after?',
        replies: [answerReply('Same tool result applies.', ['Rain.'])],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: 'Same tool result applies.' },
            { type: 'agent_message', text: 'Rain.' },
          ],
          // After a new process read the transcript back from storage: both assistant messages
          // of the tool loop still carry their reasoning_content.
          requests: [
            {
              messages: [
                { role: 'user' },
                { role: 'assistant', reasoning_content: WEATHER_THOUGHT.join('') },
                { role: 'tool' },
                {
                  role: 'assistant',
                  content: 'Cloudy, 7–13 °C.',
                  reasoning_content: 'It is cloudy, I will say so.',
                },
                { role: 'user', content: 'And the day after?' },
              ],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'a tool-call message with no streamed reasoning goes back with reasoning_content ""',
    source:
      'DeepSeek Thinking Mode guide (the field is required on tool-call turns); the empty ' +
      'string is what DeepSeek accepts for a turn that streamed no reasoning',
    client,
    model: { name: model, api: 'chat' },
    tools: ['list_files'],
    turns: [
      {
        input: 'List the files.',
        replies: [
          toolCallReply([], { id: 'call_00_a', name: 'list_files', args: ['{}'] }),
          answerReply('Two files.', ['a.txt and b.txt']),
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'tool_invocation', tool_name: 'list_files' },
            { type: 'tool_output' },
            { type: 'reasoning' },
            { type: 'agent_message', text: 'a.txt and b.txt' },
          ],
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                { role: 'assistant', reasoning_content: '', tool_calls: [{ id: 'call_00_a' }] },
                { role: 'tool' },
              ],
            },
          ],
          check: ([first]) => {
            // The first request had no assistant message to carry reasoning.
            expect(JSON.stringify(first)).not.toContain('reasoning_content')
          },
        },
      },
    ],
  },
]
