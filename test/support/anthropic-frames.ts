import type { ReplayFrame, ReplayReply } from './provider-replay.ts'

/**
 * Server-Sent Events of Anthropic's Messages API, framed as the API sends them (`event:` named,
 * `data:` JSON with the same `type`): `message_start`, `content_block_start` / `_delta` /
 * `_stop`, `message_delta`, `message_stop`, `ping`, `error`. Shapes from the Messages API
 * streaming documentation ("Streaming Messages": event types, delta types, the error event) and
 * public recordings (github.com/charmbracelet/fantasy, providertests/testdata/TestAnthropic*).
 */
const frame = (type: string, fields: Record<string, unknown>): ReplayFrame => ({
  event: type,
  data: { type, ...fields },
})

export interface MessageUsage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens?: number
  cache_read_input_tokens?: number
}

/** One content block of a streamed answer, with the pieces its deltas carry. */
export type BlockScript =
  | { text: string[] }
  | { thinking: string[]; signature: string }
  | { redacted: string }
  | { tool: { id: string; name: string; args: string[] } }

export const PING = frame('ping', {})

export function messageStart(model: string, usage: MessageUsage, id = 'msg_01Replay'): ReplayFrame {
  return frame('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
        service_tier: 'standard',
        ...usage,
        output_tokens: 1,
      },
    },
  })
}

/** The frames of one content block at `index`: its start, its deltas, its stop. */
export function blockFrames(index: number, block: BlockScript): ReplayFrame[] {
  const delta = (d: Record<string, unknown>) => frame('content_block_delta', { index, delta: d })
  const stop = frame('content_block_stop', { index })
  if ('text' in block) {
    return [
      frame('content_block_start', { index, content_block: { type: 'text', text: '' } }),
      ...block.text.map((text) => delta({ type: 'text_delta', text })),
      stop,
    ]
  }
  if ('thinking' in block) {
    return [
      frame('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
      ...block.thinking.map((thinking) => delta({ type: 'thinking_delta', thinking })),
      delta({ type: 'signature_delta', signature: block.signature }),
      stop,
    ]
  }
  if ('redacted' in block) {
    return [
      frame('content_block_start', {
        index,
        content_block: { type: 'redacted_thinking', data: block.redacted },
      }),
      stop,
    ]
  }
  const { id, name, args } = block.tool
  return [
    frame('content_block_start', {
      index,
      content_block: { type: 'tool_use', id, name, input: {} },
    }),
    delta({ type: 'input_json_delta', partial_json: '' }),
    ...args.map((partial_json) => delta({ type: 'input_json_delta', partial_json })),
    stop,
  ]
}

/** `message_delta` (stop reason, cumulative usage) and `message_stop`. */
export function messageEnd(stopReason: string, usage: MessageUsage): ReplayFrame[] {
  return [
    frame('message_delta', {
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
    }),
    frame('message_stop', {}),
  ]
}

/** A whole streamed answer: start, the blocks in order (a ping after the first), end. */
export function messageReply(fields: {
  model: string
  usage: MessageUsage
  blocks: BlockScript[]
  stop: string
  id?: string
}): ReplayReply {
  const blocks = fields.blocks.flatMap((block, index) => blockFrames(index, block))
  return {
    frames: [
      messageStart(fields.model, fields.usage, fields.id),
      ...blocks.slice(0, 2),
      PING,
      ...blocks.slice(2),
      ...messageEnd(fields.stop, fields.usage),
    ],
  }
}

/** An `error` event inside a stream (HTTP 200), as the API sends it when it fails midway. */
export function errorEvent(type: string, message: string): ReplayFrame {
  return frame('error', { error: { type, message } })
}

/** An HTTP error answer: `{"type": "error", "error": {type, message}, "request_id"}`. */
export function errorReply(status: number, type: string, message: string): ReplayReply {
  return {
    status,
    headers: { 'request-id': 'req_011Replay' },
    body: { type: 'error', error: { type, message }, request_id: 'req_011Replay' },
  }
}
