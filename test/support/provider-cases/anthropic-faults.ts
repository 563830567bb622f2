import { errorEvent, errorReply, messageReply, messageStart, PING } from '../anthropic-frames.ts'
import type { ProviderCase } from '../provider-case.ts'

/**
 * Anthropic failures through the native adapter (one retry in the conformance client): the
 * "Errors" page of the Claude API (HTTP errors `{"type":"error","error":{type, message}}`, 529
 * overloaded_error, 413 request_too_large, 401 authentication_error) and the "Streaming Messages"
 * guide's error event (`event: error` inside a 200 stream, e.g. overloaded_error under load).
 */
const client = { adapter: 'anthropic' } as const
const MODEL = 'claude-sonnet-4-6'
const usage = { input_tokens: 30, output_tokens: 4 }
const hello = messageReply({
  model: MODEL,
  usage,
  blocks: [{ text: ['Hello.'] }],
  stop: 'end_turn',
})
const hi = { input: 'Hi' }

/** A one-turn case on the model above. */
const oneTurn = (name: string, source: string, turn: ProviderCase['turns'][number]) => ({
  name,
  source,
  client,
  model: { name: MODEL, api: 'anthropic' as const },
  turns: [turn],
})

export const anthropicFaultCases: ProviderCase[] = [
  oneTurn(
    'HTTP 529 overloaded_error is retried',
    'Errors page: 529 overloaded_error "Anthropic\'s API is temporarily overloaded"',
    {
      ...hi,
      replies: [errorReply(529, 'overloaded_error', 'Overloaded'), hello],
      expect: {
        status: 'completed',
        items: [{ type: 'agent_message', text: 'Hello.' }],
        requests: [undefined, undefined],
      },
    },
  ),
  oneTurn(
    'an error event before any content is retried',
    'Streaming Messages, "Error events" (event: error, overloaded_error)',
    {
      ...hi,
      replies: [
        {
          frames: [messageStart(MODEL, usage), PING, errorEvent('overloaded_error', 'Overloaded')],
        },
        hello,
      ],
      expect: { status: 'completed', items: [{ type: 'agent_message', text: 'Hello.' }] },
    },
  ),
  oneTurn(
    'an error event after text fails the turn with the message completed',
    'Streaming Messages, "Error events"; an event after output is not retried',
    {
      ...hi,
      replies: [
        {
          frames: [
            ...(hello.frames ?? []).slice(0, 3),
            errorEvent('api_error', 'Internal server error'),
          ],
        },
      ],
      expect: {
        status: 'failed',
        items: [{ type: 'agent_message', text: 'Hello.' }],
        failure: 'Internal server error',
        requests: [undefined],
      },
    },
  ),
  oneTurn(
    'a stream cut before message_stop fails the turn as a transport fault',
    'Streaming Messages (every stream ends with message_stop)',
    {
      ...hi,
      replies: [{ frames: (hello.frames ?? []).slice(0, 4), cut: true }],
      expect: {
        status: 'failed',
        items: [{ type: 'agent_message', text: 'Hello.' }],
        failure: 'network',
      },
    },
  ),
  oneTurn(
    "HTTP 401 authentication_error fails at once, without the provider's words (they may name the key)",
    'Errors page: 401 authentication_error',
    {
      ...hi,
      replies: [errorReply(401, 'authentication_error', 'invalid x-api-key')],
      expect: {
        status: 'failed',
        failure:
          "Model request failed: auth (HTTP 401): the provider refused the deployment's model credentials",
        requests: [undefined],
      },
    },
  ),
  {
    name: 'HTTP 413 request_too_large is a context overflow: compacted, then retried',
    source: 'Errors page: 413 request_too_large; docs/compaction.md recovery compaction',
    client,
    model: { name: MODEL, api: 'anthropic' },
    turns: [
      { ...hi, replies: [hello], expect: { status: 'completed' } },
      {
        input: 'Now read this huge log',
        replies: [
          errorReply(
            413,
            'request_too_large',
            'Request exceeds the maximum allowed number of bytes.',
          ),
          messageReply({
            model: MODEL,
            usage,
            blocks: [{ text: ['The user said hi and was greeted.'] }],
            stop: 'end_turn',
          }),
          messageReply({ model: MODEL, usage, blocks: [{ text: ['Read it.'] }], stop: 'end_turn' }),
        ],
        expect: {
          status: 'completed',
          items: [{ type: 'agent_message', text: 'Read it.' }],
          requests: [undefined, undefined, undefined],
        },
      },
    ],
  },
]
