import { expect } from 'vitest'
import { messageReply } from '../anthropic-frames.ts'
import type { ProviderCase } from '../provider-case.ts'
import { ADD_ID, MULTI_TOOL, MULTIPLY_ID, SONNET_4 } from './anthropic-recorded.ts'

/**
 * More Anthropic Messages API stream shapes, through the native adapter: a recording verbatim
 * (the API pads its JSON with spaces), parallel tool use, redacted thinking, prompt-caching usage,
 * a max_tokens cut. Sources are named per case.
 */
const client = { adapter: 'anthropic' } as const
const OPUS = 'claude-opus-4-7'

/** A redacted_thinking block's data, as the "Extended thinking" guide shows one (opaque). */
const REDACTED =
  'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB9URj2pLmN3kF8/dW5hR7xJ0aP1oLs9yTcMnKVf2wRpEGjH9XZaBt4UvDcPrQ'

export const anthropicStreamCases: ProviderCase[] = [
  {
    name: 'a recorded stream verbatim: text, then two parallel tool_use blocks, results in one message',
    source:
      'fantasy recording TestAnthropicCommonWithCacheControl/claude-sonnet-4/multi_tool_streaming.yaml (both responses; the wire padding kept)',
    client,
    model: { name: SONNET_4, api: 'anthropic' },
    tools: ['add', 'multiply'],
    turns: [
      {
        input: 'Add and multiply the number 2 and 3',
        replies: [
          { frames: MULTI_TOOL },
          messageReply({
            model: SONNET_4,
            usage: { input_tokens: 700, output_tokens: 35 },
            blocks: [
              {
                text: [
                  'The',
                  ' results are:\n- Adding',
                  ' 2 + 3 = 5\n-',
                  ' Multiplying 2 × ',
                  '3 = 6',
                ],
              },
            ],
            stop: 'end_turn',
          }),
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'agent_message', text: "I'll add and multiply the numbers 2 and 3 for you." },
            { type: 'tool_invocation', tool_name: 'add', arguments: { a: 2, b: 3 } },
            { type: 'tool_output', status: 'completed' },
            { type: 'tool_invocation', tool_name: 'multiply', arguments: { a: 2, b: 3 } },
            { type: 'tool_output', status: 'completed' },
            {
              type: 'agent_message',
              text: 'The results are:\n- Adding 2 + 3 = 5\n- Multiplying 2 × 3 = 6',
            },
          ],
          usage: {
            input_tokens: 1202,
            cached_input_tokens: 0,
            cache_creation_tokens: 0,
            output_tokens: 172,
          },
          requests: [
            undefined,
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  content: [
                    { type: 'text', text: "I'll add and multiply the numbers 2 and 3 for you." },
                    { type: 'tool_use', id: ADD_ID, name: 'add', input: { a: 2, b: 3 } },
                    { type: 'tool_use', id: MULTIPLY_ID, name: 'multiply', input: { a: 2, b: 3 } },
                  ],
                },
                {
                  role: 'user',
                  content: [
                    { type: 'tool_result', tool_use_id: ADD_ID },
                    {
                      type: 'tool_result',
                      tool_use_id: MULTIPLY_ID,
                      cache_control: { type: 'ephemeral' },
                    },
                  ],
                },
              ],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'redacted thinking: no reasoning text shown, the block goes back unchanged next turn',
    source:
      '"Extended thinking" guide, "Thinking redaction" (redacted_thinking blocks, opaque data)',
    client,
    model: { name: OPUS, api: 'anthropic', reasoning_effort: 'medium' },
    turns: [
      {
        input: 'ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING',
        replies: [
          messageReply({
            model: OPUS,
            usage: { input_tokens: 92, output_tokens: 60 },
            blocks: [{ redacted: REDACTED }, { text: ['I cannot show my reasoning here.'] }],
            stop: 'end_turn',
          }),
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'I cannot show my reasoning here.' }],
          requests: [{ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } }],
        },
      },
      {
        input: 'Go on',
        replies: [
          messageReply({
            model: OPUS,
            usage: { input_tokens: 180, output_tokens: 4 },
            blocks: [{ text: ['Done.'] }],
            stop: 'end_turn',
          }),
        ],
        expect: {
          status: 'completed',
          requests: [
            {
              messages: [
                { role: 'user' },
                {
                  role: 'assistant',
                  content: [
                    { type: 'redacted_thinking', data: REDACTED },
                    { type: 'text', text: 'I cannot show my reasoning here.' },
                  ],
                },
                { role: 'user', content: [{ type: 'text', text: 'Go on' }] },
              ],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'prompt caching: cache writes, then reads, counted in input and priced apart',
    source:
      '"Prompt caching" guide, "Tracking cache performance" (cache_creation_input_tokens, cache_read_input_tokens beside input_tokens)',
    client,
    model: { name: OPUS, api: 'anthropic' },
    instructions: 'You are a careful coding agent.',
    turns: [
      {
        input: 'First',
        replies: [
          messageReply({
            model: OPUS,
            usage: { input_tokens: 12, output_tokens: 5, cache_creation_input_tokens: 4_096 },
            blocks: [{ text: ['One.'] }],
            stop: 'end_turn',
          }),
        ],
        expect: {
          status: 'completed',
          usage: {
            input_tokens: 4_108,
            cached_input_tokens: 0,
            cache_creation_tokens: 4_096,
            output_tokens: 5,
          },
          check: ([request]) => {
            const system = request?.system as Record<string, unknown>[]
            expect(system[0]).toMatchObject({ cache_control: { type: 'ephemeral' } })
          },
        },
      },
      {
        input: 'Second',
        replies: [
          messageReply({
            model: OPUS,
            usage: {
              input_tokens: 9,
              output_tokens: 5,
              cache_read_input_tokens: 4_096,
              cache_creation_input_tokens: 20,
            },
            blocks: [{ text: ['Two.'] }],
            stop: 'end_turn',
          }),
        ],
        expect: {
          status: 'completed',
          usage: {
            input_tokens: 4_125,
            cached_input_tokens: 4_096,
            cache_creation_tokens: 20,
            output_tokens: 5,
          },
          session: {
            usage: {
              input_tokens: 8_233,
              cached_input_tokens: 4_096,
              cache_creation_tokens: 4_116,
              output_tokens: 10,
            },
          },
        },
      },
    ],
  },
  {
    name: 'an answer cut at max_tokens completes with what arrived',
    source: 'Messages API reference, stop_reason "max_tokens"',
    client,
    model: { name: OPUS, api: 'anthropic', max_output_tokens: 16 },
    turns: [
      {
        input: 'Write a long poem',
        replies: [
          messageReply({
            model: OPUS,
            usage: { input_tokens: 20, output_tokens: 16 },
            blocks: [{ text: ['Roses are red, violets', ' are'] }],
            stop: 'max_tokens',
          }),
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Roses are red, violets are' }],
          requests: [{ max_tokens: 16 }],
        },
      },
    ],
  },
]
