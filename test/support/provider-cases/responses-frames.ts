import type { ReplayFrame } from '../provider-replay.ts'

/**
 * A Responses API stream as OpenAI frames it (API reference, "Streaming events": every event
 * named in `event:` and carrying `sequence_number`): response.created / in_progress, then per
 * output item `output_item.added`, its deltas (`output_text.delta` with item_id, output_index,
 * content_index; `reasoning_summary_part.added` + `reasoning_summary_text.delta`;
 * `function_call_arguments.delta`), the matching `.done` events and `output_item.done`, and
 * last `response.completed` (or `response.incomplete`) with the whole response object.
 */
export type OutputItem =
  | { type: 'message'; id: string; text: string; phase?: 'commentary' | 'final_answer' }
  | {
      type: 'reasoning'
      id: string
      summary: string[]
      encrypted_content?: string
    }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string }

export interface ResponsesUsage {
  input_tokens: number
  cached_tokens?: number
  output_tokens: number
  reasoning_tokens?: number
}

export function responsesStream(
  model: string,
  items: OutputItem[],
  usage: ResponsesUsage,
  options: { status?: 'completed' | 'incomplete'; cutAfterItems?: number } = {},
): ReplayFrame[] {
  let sequence = 0
  const frames: ReplayFrame[] = []
  const push = (type: string, fields: Record<string, unknown>) =>
    frames.push({ event: type, data: { type, sequence_number: sequence++, ...fields } })
  const base = { id: 'resp_replay_1', object: 'response', created_at: 1_760_000_000, model }
  push('response.created', { response: { ...base, status: 'in_progress', output: [] } })
  push('response.in_progress', { response: { ...base, status: 'in_progress', output: [] } })
  const output: Record<string, unknown>[] = []
  for (const [output_index, item] of items.entries()) {
    if (options.cutAfterItems === output_index) return frames
    const done = outputItem(item)
    push('response.output_item.added', { output_index, item: started(item) })
    if (item.type === 'message') {
      const part = { type: 'output_text', text: '', annotations: [] }
      push('response.content_part.added', {
        item_id: item.id,
        output_index,
        content_index: 0,
        part,
      })
      for (const delta of pieces(item.text)) {
        push('response.output_text.delta', {
          item_id: item.id,
          output_index,
          content_index: 0,
          delta,
          logprobs: [],
        })
      }
      push('response.output_text.done', {
        item_id: item.id,
        output_index,
        content_index: 0,
        text: item.text,
        logprobs: [],
      })
      push('response.content_part.done', {
        item_id: item.id,
        output_index,
        content_index: 0,
        part: { ...part, text: item.text },
      })
    } else if (item.type === 'reasoning') {
      for (const [summary_index, text] of item.summary.entries()) {
        const part = { type: 'summary_text', text: '' }
        push('response.reasoning_summary_part.added', {
          item_id: item.id,
          output_index,
          summary_index,
          part,
        })
        push('response.reasoning_summary_text.delta', {
          item_id: item.id,
          output_index,
          summary_index,
          delta: text,
        })
        push('response.reasoning_summary_text.done', {
          item_id: item.id,
          output_index,
          summary_index,
          text,
        })
      }
    } else {
      for (const delta of pieces(item.arguments)) {
        push('response.function_call_arguments.delta', { item_id: item.id, output_index, delta })
      }
      push('response.function_call_arguments.done', {
        item_id: item.id,
        output_index,
        arguments: item.arguments,
      })
    }
    push('response.output_item.done', { output_index, item: done })
    output.push(done)
  }
  const status = options.status ?? 'completed'
  push(`response.${status}`, {
    response: {
      ...base,
      status,
      ...(status === 'incomplete' ? { incomplete_details: { reason: 'max_output_tokens' } } : {}),
      output,
      usage: {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
        output_tokens: usage.output_tokens,
        output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
        total_tokens: usage.input_tokens + usage.output_tokens,
      },
    },
  })
  return frames
}

function outputItem(item: OutputItem): Record<string, unknown> {
  switch (item.type) {
    case 'message':
      return {
        id: item.id,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        ...(item.phase ? { phase: item.phase } : {}),
        content: [{ type: 'output_text', text: item.text, annotations: [] }],
      }
    case 'reasoning':
      return {
        id: item.id,
        type: 'reasoning',
        summary: item.summary.map((text) => ({ type: 'summary_text', text })),
        ...(item.encrypted_content ? { encrypted_content: item.encrypted_content } : {}),
      }
    case 'function_call':
      return { ...item, status: 'completed' }
  }
}

function started(item: OutputItem): Record<string, unknown> {
  const done = outputItem(item)
  if (item.type === 'message') return { ...done, status: 'in_progress', content: [] }
  if (item.type === 'reasoning') return { id: item.id, type: 'reasoning', summary: [] }
  return { ...done, status: 'in_progress', arguments: '' }
}

/** Text in deltas of a few characters, as providers stream it. */
function pieces(text: string): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += 7) out.push(text.slice(i, i + 7))
  return out
}
