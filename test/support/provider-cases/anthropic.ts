import { expect } from 'vitest'
import { messageReply } from '../anthropic-frames.ts'
import type { ProviderCase } from '../provider-case.ts'
import { anthropicFaultCases } from './anthropic-faults.ts'
import { anthropicStreamCases } from './anthropic-streams.ts'

/**
 * Anthropic Messages API (api.anthropic.com/v1/messages), through the native adapter
 * (adapters/anthropic, sessions on `api: "anthropic"`).
 *
 * Shapes: the Messages API reference and "Streaming Messages" guide (event order
 * message_start → content_block_start/delta/stop → message_delta → message_stop, `ping`
 * anywhere, delta types text_delta, input_json_delta, thinking_delta, signature_delta); the
 * "Extended thinking" guide (thinking blocks with a `signature` that must go back unchanged in a
 * tool loop; `redacted_thinking` blocks with opaque `data`); "Prompt caching" (cache_control
 * breakpoints, `cache_creation_input_tokens` / `cache_read_input_tokens` counted apart from
 * `input_tokens`); and public recordings of claude-sonnet-4 streams in
 * github.com/charmbracelet/fantasy, providertests/testdata/TestAnthropicThinking/claude-sonnet-4/
 * thinking-streaming.yaml (thinking + tool_use, its signature) and
 * TestAnthropicCommonWithCacheControl/claude-sonnet-4/multi_tool_streaming.yaml (two parallel
 * tool_use blocks after text; cumulative usage in message_delta).
 */
const client = { adapter: 'anthropic' } as const
const EPHEMERAL = { type: 'ephemeral' }

/** The signature of the recorded thinking block (fantasy, thinking-streaming.yaml). */
const SIGNATURE =
  'EsQDCkYICBgCKkBr9+FTcKs+la0OlmRVB4HF/bTERKj+hr9pp9uxwdet2/P99iNZh/vwxm7Cd5wrZD0FnPkUz3DEqXv+ZoIL2fAoEgxOEzQepAptMFJiFJcaDM2L2wJzGec9170N1SIwHhl0DW0hXYbwHTRAR6w9biU0HwUh00oLghjeBusiv40ctsJB4tO/WyOR2f0iH7pZKqsC3UTE2b7nqQUmYP8dEDfnfNdbr24zEaWiZ2QMbwv9ZrwtUy0Wo/ot3n9JMpocHUSwtyKzB4GsMsgr/xtGEl9541AMSFhR1G8y3Ffn22e6pXV7dakwU/vxcBTvdwfBplrBxxJ1zT/ieuQUrdemKCRZS4QVmaVijUpYQMaQF7iCJJPKYI+wBhxT0y0yOoVqORKg2AuRmbkTpMfKZJ5xRBLAeydMhloeKfYswDDisWIChmJlclIro0Jr80OhpohTcQGayY4fjn0A/ir+9PYzLzjGitR3a+/lfHvuTmPC9AnWv3Sp87mddUuJ10jqO9QWXNTnAVdehLiN/heJVjOMkXCstWLVUycEgnfwXEqlNMMFuRAfOwTte0Ls9qHkl3Fzo8ompJiqxF879rSwcSEYAQ=='
const FLORENCE_THOUGHT = [
  'The user is asking for',
  ' weather information for Florence, Italy. I have',
  ' access to a weather function that takes a "location" parameter.',
]
const SONNET_4 = 'claude-sonnet-4-20250514'
const HAIKU = 'claude-haiku-4-5-20251001'

const text = (model: string, pieces: string[], usage = { input_tokens: 557, output_tokens: 35 }) =>
  messageReply({ model, usage, blocks: [{ text: pieces }], stop: 'end_turn' })

export const anthropicCases: ProviderCase[] = [
  {
    name: 'a text answer: one agent_message, usage, the transcript sent back as blocks',
    source:
      'Messages API "Streaming Messages" (basic streaming request); request shape of the API reference',
    client,
    model: { name: HAIKU, api: 'anthropic' },
    turns: [
      {
        input: 'Hello, Claude',
        replies: [
          text(HAIKU, ['Hello!', ' How can I help?'], {
            input_tokens: 12,
            output_tokens: 9,
          }),
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Hello! How can I help?' }],
          usage: {
            input_tokens: 12,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 9,
          },
          requests: [
            {
              model: HAIKU,
              max_tokens: 32_000,
              stream: true,
              messages: [
                {
                  role: 'user',
                  content: [{ type: 'text', text: 'Hello, Claude', cache_control: EPHEMERAL }],
                },
              ],
            },
          ],
          check: ([first]) => {
            // No effort set: no thinking; no instructions: no system. The catalog (the
            // workspace's artifact tools) is one cache prefix: its last tool is a breakpoint.
            expect(first).not.toHaveProperty('thinking')
            expect(first).not.toHaveProperty('system')
            const tools = (first?.tools ?? []) as Record<string, unknown>[]
            expect(tools.map((tool) => tool.cache_control ?? null)).toEqual([
              ...tools.slice(1).map(() => null),
              EPHEMERAL,
            ])
          },
        },
      },
      {
        input: 'Thanks',
        replies: [text(HAIKU, ['Any time.'], { input_tokens: 30, output_tokens: 4 })],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Any time.' }],
          // The growing history: breakpoints on the last two user messages.
          requests: [
            {
              messages: [
                {
                  role: 'user',
                  content: [{ type: 'text', text: 'Hello, Claude', cache_control: EPHEMERAL }],
                },
                {
                  role: 'assistant',
                  content: [{ type: 'text', text: 'Hello! How can I help?' }],
                },
                {
                  role: 'user',
                  content: [{ type: 'text', text: 'Thanks', cache_control: EPHEMERAL }],
                },
              ],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'extended thinking in a tool loop: the thinking block goes back with its signature',
    source:
      'fantasy recording TestAnthropicThinking/claude-sonnet-4/thinking-streaming.yaml; ' +
      '"Extended thinking" guide, "Preserving thinking blocks" (tool use)',
    client,
    model: { name: SONNET_4, api: 'anthropic', reasoning_effort: 'low' },
    tools: ['weather'],
    turns: [
      {
        input: "What's the weather in Florence, Italy?",
        replies: [
          messageReply({
            model: SONNET_4,
            usage: { input_tokens: 423, output_tokens: 119 },
            blocks: [
              { thinking: FLORENCE_THOUGHT, signature: SIGNATURE },
              {
                tool: {
                  id: 'toolu_0171KFcBwn1Z64XzvQfz3sZS',
                  name: 'weather',
                  args: ['{"location', '": "F', 'lo', 'rence, I', 'taly', '"}'],
                },
              },
            ],
            stop: 'tool_use',
          }),
          text(SONNET_4, ['The current', ' weather in Florence, Italy is 40°C.']),
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: FLORENCE_THOUGHT.join('') },
            {
              type: 'tool_invocation',
              tool_name: 'weather',
              tool_call_id: 'toolu_0171KFcBwn1Z64XzvQfz3sZS',
              arguments: { location: 'Florence, Italy' },
            },
            { type: 'tool_output', status: 'completed' },
            { type: 'agent_message', text: 'The current weather in Florence, Italy is 40°C.' },
          ],
          usage: {
            input_tokens: 980,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 154,
          },
          requests: [
            { thinking: { type: 'enabled', budget_tokens: 4_096 }, max_tokens: 32_000 },
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  content: [
                    { type: 'thinking', thinking: FLORENCE_THOUGHT.join(''), signature: SIGNATURE },
                    {
                      type: 'tool_use',
                      id: 'toolu_0171KFcBwn1Z64XzvQfz3sZS',
                      name: 'weather',
                      input: { location: 'Florence, Italy' },
                    },
                  ],
                },
                {
                  role: 'user',
                  content: [
                    {
                      type: 'tool_result',
                      tool_use_id: 'toolu_0171KFcBwn1Z64XzvQfz3sZS',
                      cache_control: EPHEMERAL,
                    },
                  ],
                },
              ],
            },
          ],
        },
      },
      {
        input: 'And tomorrow?',
        replies: [text(SONNET_4, ['Probably as hot.'], { input_tokens: 620, output_tokens: 6 })],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Probably as hot.' }],
          // Read back from the store by a new process: the signature is still there, unchanged.
          requests: [
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  content: [{ type: 'thinking', signature: SIGNATURE }, { type: 'tool_use' }],
                },
                { role: 'user', content: [{ type: 'tool_result' }] },
                { role: 'assistant', content: [{ type: 'text' }] },
                { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
              ],
            },
          ],
        },
      },
    ],
  },
  ...anthropicStreamCases,
  ...anthropicFaultCases,
]
