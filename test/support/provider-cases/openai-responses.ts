import { expect } from 'vitest'
import type { ProviderCase } from '../provider-case.ts'
import { responsesStream } from './responses-frames.ts'

/**
 * OpenAI Responses API (api.openai.com/v1/responses), stateless (`store: false`).
 *
 * Shapes: OpenAI API reference, "Responses → Streaming events" and the `Response` object
 * (platform.openai.com/docs/api-reference/responses-streaming), as typed by the official SDK
 * (github.com/openai/openai-node, src/resources/responses/responses.ts: ResponseOutputMessage
 * with `phase` — "preserve and resend phase on all assistant messages"; ResponseReasoningItem
 * with `encrypted_content`, populated when `include` names `reasoning.encrypted_content`).
 * Reasoning across a tool loop without stored state: OpenAI cookbook "Better performance from
 * reasoning models using the Responses API" (cookbook.openai.com/examples/responses_api/
 * reasoning_items) — the reasoning items go back as input, encrypted, with `store: false`.
 * Errors: `response.failed` with `error.code` (`server_error`), and the `error` event.
 */
const client = { adapter: 'openai', provider: 'openai' } as const
const gpt5 = 'gpt-5.4'
const ENCRYPTED = 'gAAAAABo2_encrypted_reasoning_payload=='

export const openaiResponsesCases: ProviderCase[] = [
  {
    name: 'a commentary preamble and a final answer are two agent_messages; both go back with phase',
    source: 'SDK ResponseOutputMessage.phase; streaming events reference',
    client,
    model: { name: gpt5, api: 'responses' },
    turns: [
      {
        input: 'Summarize the repo.',
        replies: [
          {
            frames: responsesStream(
              gpt5,
              [
                { type: 'message', id: 'msg_1', text: 'Let me look.', phase: 'commentary' },
                { type: 'message', id: 'msg_2', text: 'It is a CLI.', phase: 'final_answer' },
              ],
              { input_tokens: 900, cached_tokens: 512, output_tokens: 20 },
            ),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'agent_message', text: 'Let me look.' },
            { type: 'agent_message', text: 'It is a CLI.' },
          ],
          usage: {
            input_tokens: 900,
            cached_input_tokens: 512,
            cache_creation_tokens: 0,
            output_tokens: 20,
          },
        },
      },
      {
        input: 'Thanks.',
        replies: [
          {
            frames: responsesStream(gpt5, [{ type: 'message', id: 'msg_3', text: 'Welcome.' }], {
              input_tokens: 950,
              output_tokens: 3,
            }),
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Welcome.' }],
          requests: [
            {
              store: false,
              input: [
                { type: 'message', role: 'user' },
                {
                  type: 'message',
                  role: 'assistant',
                  content: 'Let me look.',
                  phase: 'commentary',
                },
                {
                  type: 'message',
                  role: 'assistant',
                  content: 'It is a CLI.',
                  phase: 'final_answer',
                },
                { type: 'message', role: 'user', content: 'Thanks.' },
              ],
            },
          ],
        },
      },
    ],
  },
  {
    name: 'reasoning items cross a tool loop encrypted (store false, include reasoning.encrypted_content)',
    source: 'OpenAI cookbook on reasoning items; SDK ResponseReasoningItem',
    client,
    model: { name: gpt5, api: 'responses' },
    tools: ['read_file'],
    turns: [
      {
        input: 'Read a.txt',
        replies: [
          {
            frames: responsesStream(
              gpt5,
              [
                {
                  type: 'reasoning',
                  id: 'rs_1',
                  summary: ['**Reading the file**'],
                  encrypted_content: ENCRYPTED,
                },
                {
                  type: 'function_call',
                  id: 'fc_1',
                  call_id: 'call_r1',
                  name: 'read_file',
                  arguments: '{"path":"a.txt"}',
                },
              ],
              { input_tokens: 300, output_tokens: 80, reasoning_tokens: 64 },
            ),
          },
          {
            frames: responsesStream(gpt5, [{ type: 'message', id: 'msg_1', text: 'Done.' }], {
              input_tokens: 420,
              cached_tokens: 256,
              output_tokens: 4,
            }),
          },
        ],
        expect: {
          status: 'completed',
          items: [
            { type: 'reasoning', text: '**Reading the file**' },
            { type: 'tool_invocation', tool_call_id: 'call_r1' },
            { type: 'tool_output' },
            { type: 'agent_message', text: 'Done.' },
          ],
          requests: [
            { store: false, include: ['reasoning.encrypted_content'] },
            {
              include: ['reasoning.encrypted_content'],
              input: [
                { type: 'message', role: 'user' },
                {
                  type: 'reasoning',
                  id: 'rs_1',
                  summary: [{ type: 'summary_text', text: '**Reading the file**' }],
                  encrypted_content: ENCRYPTED,
                },
                { type: 'function_call', call_id: 'call_r1', name: 'read_file' },
                { type: 'function_call_output', call_id: 'call_r1' },
              ],
            },
          ],
          session: { reasoning_tokens: 64 },
        },
      },
    ],
  },
  {
    name: 'a model that does not reason is not asked for encrypted reasoning',
    source: 'OpenAI answers 400 "Encrypted content is not supported with this model" otherwise',
    client,
    model: { name: 'gpt-4.1-mini', api: 'responses' },
    turns: [
      {
        input: 'Hi',
        replies: [
          {
            frames: responsesStream(
              'gpt-4.1-mini',
              [{ type: 'message', id: 'msg_1', text: 'Hello.' }],
              { input_tokens: 10, output_tokens: 2 },
            ),
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Hello.' }],
          check: ([request]) => expect(request).not.toHaveProperty('include'),
        },
      },
    ],
  },
  {
    name: 'response.failed with server_error before any output is retried',
    source: 'Streaming events reference: response.failed carries the response with error.code',
    client,
    model: { name: gpt5, api: 'responses' },
    turns: [
      {
        input: 'Hi',
        replies: [
          {
            frames: [
              ...responsesStream(gpt5, [], { input_tokens: 0, output_tokens: 0 }).slice(0, 2),
              {
                event: 'response.failed',
                data: {
                  type: 'response.failed',
                  sequence_number: 2,
                  response: {
                    id: 'resp_replay_1',
                    object: 'response',
                    status: 'failed',
                    model: gpt5,
                    output: [],
                    error: { code: 'server_error', message: 'The server had an error' },
                  },
                },
              },
            ],
          },
          {
            frames: responsesStream(gpt5, [{ type: 'message', id: 'msg_1', text: 'Hello.' }], {
              input_tokens: 10,
              output_tokens: 2,
            }),
          },
        ],
        expect: { status: 'completed', items: [{ type: 'agent_message', text: 'Hello.' }] },
      },
    ],
  },
  {
    name: 'a stream that breaks off mid-message fails the turn with the message completed',
    source: 'Streaming events reference (a stream without response.completed is incomplete)',
    client,
    model: { name: gpt5, api: 'responses' },
    turns: [
      {
        input: 'Hi',
        replies: [
          {
            frames: responsesStream(
              gpt5,
              [{ type: 'message', id: 'msg_1', text: 'Partial answer that is cut' }],
              { input_tokens: 10, output_tokens: 2 },
            ).slice(0, 6),
            cut: true,
          },
        ],
        expect: {
          status: 'failed',
          items: [{ type: 'agent_message', text: 'Partial answer' }],
        },
      },
    ],
  },
  {
    name: 'an answer cut at max_output_tokens completes as incomplete (stop reason length)',
    source: 'Response object: status incomplete, incomplete_details.reason max_output_tokens',
    client,
    model: { name: gpt5, api: 'responses', max_output_tokens: 16 },
    turns: [
      {
        input: 'Write a poem',
        replies: [
          {
            frames: responsesStream(
              gpt5,
              [{ type: 'message', id: 'msg_1', text: 'Roses are' }],
              { input_tokens: 12, output_tokens: 16 },
              { status: 'incomplete' },
            ),
          },
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Roses are' }],
          requests: [{ max_output_tokens: 16 }],
        },
      },
    ],
  },
]
