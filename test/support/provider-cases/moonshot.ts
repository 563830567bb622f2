import { chatChunk, DONE, type ProviderCase } from '../provider-case.ts'

/**
 * Moonshot / Kimi (api.moonshot.ai, api.moonshot.cn), Chat Completions.
 *
 * Shapes: Kimi platform docs, "Streaming" guide (platform.moonshot.cn/docs/guide/utilize-the-
 * streaming-output-feature-of-kimi-api): the last data chunk carries `usage` inside the choice,
 * beside `finish_reason`, and `cached_tokens` at the top of that usage (context caching). "Kimi K2
 * Thinking" guide (platform.moonshot.ai/docs/guide/use-kimi-k2-thinking-model):
 * `reasoning_content` in the delta; in a multi-step tool loop every assistant message keeps its
 * `reasoning_content`, or the API refuses the request. Tool call ids as Kimi names them
 * (`functions.<name>:<n>`), from the tool-use guide (platform.moonshot.ai/docs/guide/use-kimi-
 * api-to-complete-tool-calls).
 */
export const MOONSHOT_MODEL = 'kimi-k2-thinking'
const model = MOONSHOT_MODEL
const client = { adapter: 'openai', provider: 'moonshot' } as const
const chunk = (fields: Omit<Parameters<typeof chatChunk>[0], 'model'>) =>
  chatChunk({ id: 'chatcmpl-6810567267ee141b4630dccb', model, ...fields })
/** Moonshot's last chunk: usage inside the choice, top-level cached_tokens. */
export const moonshotLastChunk = (
  finish: string,
  prompt: number,
  completion: number,
  cached: number,
) => {
  const frame = chunk({ delta: {}, finish_reason: finish })
  const choice = (frame.data.choices as Record<string, unknown>[])[0] as Record<string, unknown>
  choice.usage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    cached_tokens: cached,
  }
  return frame
}

const THOUGHT = 'I need the file list first.'

export const moonshotCases: ProviderCase[] = [
  {
    name: 'kimi-k2-thinking tool loop: reasoning_content returns; usage read from the choice',
    source:
      'Kimi Streaming guide (usage in the choice), Kimi K2 Thinking guide (reasoning_content)',
    client,
    model: { name: model, api: 'chat' },
    tools: ['list_files'],
    turns: [
      {
        input: 'What files are there?',
        replies: [
          {
            frames: [
              chunk({ delta: { role: 'assistant', content: '' } }),
              chunk({ delta: { reasoning_content: 'I need the file ' } }),
              chunk({ delta: { reasoning_content: 'list first.' } }),
              chunk({
                delta: {
                  tool_calls: [
                    {
                      index: 0,
                      id: 'functions.list_files:0',
                      type: 'function',
                      function: { name: 'list_files', arguments: '{"dir": "."}' },
                    },
                  ],
                },
              }),
              moonshotLastChunk('tool_calls', 812, 45, 768),
              DONE,
            ],
          },
          {
            frames: [
              chunk({ delta: { role: 'assistant', content: '' } }),
              chunk({ delta: { reasoning_content: 'Two entries.' } }),
              chunk({ delta: { content: 'There are ' } }),
              chunk({ delta: { content: 'two files.' } }),
              moonshotLastChunk('stop', 880, 12, 768),
              DONE,
            ],
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: THOUGHT },
            { type: 'tool_invocation', tool_call_id: 'functions.list_files:0' },
            { type: 'tool_output' },
            { type: 'reasoning', text: 'Two entries.' },
            { type: 'agent_message', text: 'There are two files.' },
          ],
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  reasoning_content: THOUGHT,
                  tool_calls: [{ id: 'functions.list_files:0' }],
                },
                { role: 'tool', tool_call_id: 'functions.list_files:0' },
              ],
            },
          ],
          usage: {
            input_tokens: 1692,
            cached_input_tokens: 1536,
            cache_creation_tokens: 0,
            output_tokens: 57,
          },
        },
      },
    ],
  },
]
