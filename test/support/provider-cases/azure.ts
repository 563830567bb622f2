import { chatChunk, DONE, type ProviderCase } from '../provider-case.ts'

/**
 * Azure OpenAI (`https://<resource>.openai.azure.com/openai/v1/`), Chat Completions.
 *
 * Shapes: Azure OpenAI docs, "Content filtering" (learn.microsoft.com/azure/ai-foundry/openai/
 * concepts/content-filter): a stream opens with a chunk whose `choices` is empty and which carries
 * `prompt_filter_results`; content chunks carry `content_filter_results` per choice; a
 * `finish_reason` of `content_filter` when output was filtered. Usage as OpenAI's, after the last
 * choice chunk with `stream_options.include_usage` (Azure OpenAI reference, chat completions).
 */
const model = 'gpt-4.1'
const client = { adapter: 'openai', provider: 'azure' } as const
const filters = {
  hate: { filtered: false, severity: 'safe' },
  self_harm: { filtered: false, severity: 'safe' },
  sexual: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
}
const chunk = (fields: Omit<Parameters<typeof chatChunk>[0], 'model'>) => {
  const frame = chatChunk({ id: 'chatcmpl-AzR1', model: 'gpt-4.1-2025-04-14', ...fields })
  for (const choice of frame.data.choices as Record<string, unknown>[]) {
    choice.content_filter_results = filters
  }
  return frame
}
const promptFilter = {
  data: {
    choices: [],
    created: 0,
    id: '',
    model: '',
    object: '',
    prompt_filter_results: [{ prompt_index: 0, content_filter_results: filters }],
  },
}
const usage = chatChunk({
  id: 'chatcmpl-AzR1',
  model: 'gpt-4.1-2025-04-14',
  usage: {
    prompt_tokens: 1500,
    completion_tokens: 9,
    total_tokens: 1509,
    prompt_tokens_details: { cached_tokens: 1280 },
  },
})

export const azureCases: ProviderCase[] = [
  {
    name: 'the prompt-filter chunk (no choices) and per-choice filter results are read past',
    source: 'Azure OpenAI content filtering docs (streaming annotations)',
    client,
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: 'Hello',
        replies: [
          {
            frames: [
              promptFilter,
              chunk({ delta: { role: 'assistant', content: '' } }),
              chunk({ delta: { content: 'Hello, how can ' } }),
              chunk({ delta: { content: 'I help?' } }),
              chunk({ delta: {}, finish_reason: 'stop' }),
              usage,
              DONE,
            ],
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Hello, how can I help?' }],
          usage: {
            input_tokens: 1500,
            cached_input_tokens: 1280,
            cache_creation_tokens: 0,
            output_tokens: 9,
          },
        },
      },
    ],
  },
  {
    name: 'an answer stopped by the content filter completes with what came before',
    source: 'Azure OpenAI content filtering docs: finish_reason content_filter',
    client,
    model: { name: model, api: 'chat' },
    turns: [
      {
        input: 'Tell me',
        replies: [
          {
            frames: [
              promptFilter,
              chunk({ delta: { role: 'assistant', content: 'Here is' } }),
              chunk({ delta: {}, finish_reason: 'content_filter' }),
              usage,
              DONE,
            ],
          },
        ],
        expect: { status: 'completed', items: [{ type: 'agent_message', text: 'Here is' }] },
      },
    ],
  },
]
