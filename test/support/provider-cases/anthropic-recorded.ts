import type { ReplayFrame } from '../provider-replay.ts'

/** Anthropic streams recorded from the real API, frame for frame (their padding included). */
export const SONNET_4 = 'claude-sonnet-4-20250514'

/** One recorded SSE event, exactly as it was on the wire (its padding included). */
const wire = (event: string, json: string): ReplayFrame => ({
  raw: `event: ${event}\ndata: ${json}\n\n`,
})

/**
 * github.com/charmbracelet/fantasy, providertests/testdata/TestAnthropicCommonWithCacheControl/
 * claude-sonnet-4/multi_tool_streaming.yaml, first response: text, then two tool_use blocks.
 */
export const ADD_ID = 'toolu_014EzUJ1TCJvs3dR7mZZgoyd'
export const MULTIPLY_ID = 'toolu_01GYivdvVTotPKuatZiCkQvv'
const delta = (index: number, json: string, pad = '   ') =>
  wire(
    'content_block_delta',
    `{"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(json)}}${pad}}`,
  )
export const MULTI_TOOL: ReplayFrame[] = [
  wire(
    'message_start',
    `{"type":"message_start","message":{"model":"${SONNET_4}","id":"msg_01Ps4SquTmAkLoZixSEW4SrN","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":502,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},"output_tokens":4,"service_tier":"standard"}}              }`,
  ),
  wire(
    'content_block_start',
    '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}       }',
  ),
  wire(
    'content_block_delta',
    `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"I'll add an"}       }`,
  ),
  wire(
    'content_block_delta',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"d multiply the numbers 2 and 3 for"}           }',
  ),
  wire('ping', '{"type": "ping"}'),
  wire(
    'content_block_delta',
    '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" you."}           }',
  ),
  wire('content_block_stop', '{"type":"content_block_stop","index":0}'),
  wire(
    'content_block_start',
    `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"${ADD_ID}","name":"add","input":{}}   }`,
  ),
  delta(1, ''),
  delta(1, '{"a":'),
  delta(1, ' 2'),
  delta(1, ', '),
  delta(1, '"b": 3}'),
  wire('content_block_stop', '{"type":"content_block_stop","index":1              }'),
  wire(
    'content_block_start',
    `{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"${MULTIPLY_ID}","name":"multiply","input":{}}       }`,
  ),
  delta(2, ''),
  delta(2, '{"a": '),
  delta(2, '2'),
  delta(2, ', "b": '),
  delta(2, '3}', ' '),
  wire('content_block_stop', '{"type":"content_block_stop","index":2         }'),
  wire(
    'message_delta',
    '{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":502,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":137}   }',
  ),
  wire('message_stop', '{"type":"message_stop"              }'),
]
