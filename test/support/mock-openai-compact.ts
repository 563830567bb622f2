/**
 * The body of `POST /v1/responses/compact` as OpenAI answers it: `object: "response.compaction"`,
 * the user messages of the input, then one opaque `compaction` item (or a scripted output).
 */

type Json = Record<string, unknown>

export interface MockCompaction {
  /** Default: `enc_mock_<n>`. */
  encrypted_content?: string
  id?: string
  /** Replaces the whole output (e.g. a summary-only answer without a compaction item). */
  output?: Json[]
}

function userMessages(input: unknown, counter: number): Json[] {
  if (!Array.isArray(input)) {
    return typeof input === 'string' ? [userMessage(input, `msg_mock_${counter}_0`)] : []
  }
  const kept: Json[] = []
  for (const item of input as Json[]) {
    if (item?.role !== 'user' || (item.type !== undefined && item.type !== 'message')) continue
    const content = item.content
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? (content as Json[])
              .map((part) => (typeof part.text === 'string' ? part.text : ''))
              .join('')
          : ''
    kept.push(userMessage(text, `msg_mock_${counter}_${kept.length}`))
  }
  return kept
}

function userMessage(text: string, id: string): Json {
  return {
    type: 'message',
    id,
    role: 'user',
    status: 'completed',
    content: [{ type: 'input_text', text }],
  }
}

export function compactedResponse(
  compaction: MockCompaction,
  body: Json,
  counter: number,
  usage: { input_tokens: number; output_tokens: number } | null,
): Json {
  const output = compaction.output ?? [
    ...userMessages(body.input, counter),
    {
      type: 'compaction',
      id: compaction.id ?? `cmp_mock_${counter}`,
      encrypted_content: compaction.encrypted_content ?? `enc_mock_${counter}`,
    },
  ]
  return {
    id: `resp_compact_mock${counter}`,
    object: 'response.compaction',
    created_at: Math.floor(Date.now() / 1000),
    output,
    usage: usage
      ? {
          input_tokens: usage.input_tokens,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: usage.output_tokens,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: usage.input_tokens + usage.output_tokens,
        }
      : null,
  }
}
