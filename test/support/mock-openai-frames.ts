/**
 * Bodies and SSE frames as OpenAI produces them, for the Chat Completions and Responses APIs.
 * Chat frames are bare `data:` lines ending with `data: [DONE]`; Responses frames carry an
 * `event:` line and a `sequence_number`, and end with `response.completed` (no [DONE]).
 */

export interface MockToolCall {
  id?: string
  name: string
  arguments: string
}

export interface MockUsage {
  input_tokens: number
  cached_input_tokens?: number
  output_tokens: number
  reasoning_tokens?: number
}

/** What one scripted reply contains, independent of the API that serves it. */
export interface ReplyContent {
  id: string
  model: string
  created: number
  text: string
  reasoning: string
  toolCalls: Required<MockToolCall>[]
  usage: MockUsage | null
  finishReason: string
  chunkSize: number
  includeUsage: boolean
}

type Json = Record<string, unknown>

export function split(text: string, size: number): string[] {
  const parts: string[] = []
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size))
  return parts
}

const data = (payload: Json) => `data: ${JSON.stringify(payload)}\n\n`

function chatUsage(usage: MockUsage): Json {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.input_tokens + usage.output_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: usage.reasoning_tokens ?? 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

export function chatCompletion(r: ReplyContent): Json {
  const toolCalls = r.toolCalls.map((c) => ({
    id: c.id,
    type: 'function',
    function: { name: c.name, arguments: c.arguments },
  }))
  return {
    id: r.id,
    object: 'chat.completion',
    created: r.created,
    model: r.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: r.text === '' && toolCalls.length > 0 ? null : r.text,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        logprobs: null,
        finish_reason: r.finishReason,
      },
    ],
    usage: r.usage ? chatUsage(r.usage) : null,
    service_tier: 'default',
    system_fingerprint: 'fp_mock',
  }
}

export function chatFrames(r: ReplyContent): string[] {
  const base = {
    id: r.id,
    object: 'chat.completion.chunk',
    created: r.created,
    model: r.model,
    service_tier: 'default',
    system_fingerprint: 'fp_mock',
  }
  const usageField = r.includeUsage ? { usage: null } : {}
  const chunk = (delta: Json, finish: string | null = null) =>
    data({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...usageField,
    })
  const frames = [chunk({ role: 'assistant', content: '', refusal: null })]
  // Reasoning as vLLM and DeepSeek stream it; OpenAI itself does not expose it on this API.
  for (const part of split(r.reasoning, r.chunkSize))
    frames.push(chunk({ reasoning_content: part }))
  for (const part of split(r.text, r.chunkSize)) frames.push(chunk({ content: part }))
  r.toolCalls.forEach((call, index) => {
    const head = {
      index,
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: '' },
    }
    frames.push(chunk({ tool_calls: [head] }))
    for (const part of split(call.arguments, r.chunkSize)) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }))
    }
  })
  frames.push(chunk({}, r.finishReason))
  if (r.includeUsage && r.usage)
    frames.push(data({ ...base, choices: [], usage: chatUsage(r.usage) }))
  frames.push('data: [DONE]\n\n')
  return frames
}

function outputItems(r: ReplyContent): Json[] {
  const items: Json[] = []
  if (r.reasoning !== '') {
    items.push({
      id: `rs_${r.id}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: r.reasoning }],
    })
  }
  if (r.text !== '') {
    items.push({
      id: `msg_${r.id}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: r.text }],
    })
  }
  r.toolCalls.forEach((call, i) => {
    items.push({
      id: `fc_${r.id}_${i}`,
      type: 'function_call',
      status: 'completed',
      arguments: call.arguments,
      call_id: call.id,
      name: call.name,
    })
  })
  return items
}

/** The Response object: the non-streaming body and the payload of `response.completed`. */
export function responseObject(
  r: ReplyContent,
  status: 'in_progress' | 'completed' | 'incomplete' = terminalStatus(r),
): Json {
  const done = status !== 'in_progress'
  const incomplete =
    status === 'incomplete'
      ? { reason: r.finishReason === 'length' ? 'max_output_tokens' : r.finishReason }
      : null
  return {
    id: `resp_${r.id}`,
    object: 'response',
    created_at: r.created,
    status,
    error: null,
    incomplete_details: incomplete,
    instructions: null,
    max_output_tokens: null,
    model: r.model,
    output: done ? outputItems(r) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage:
      done && r.usage
        ? {
            input_tokens: r.usage.input_tokens,
            input_tokens_details: { cached_tokens: r.usage.cached_input_tokens ?? 0 },
            output_tokens: r.usage.output_tokens,
            output_tokens_details: { reasoning_tokens: r.usage.reasoning_tokens ?? 0 },
            total_tokens: r.usage.input_tokens + r.usage.output_tokens,
          }
        : null,
    user: null,
    metadata: {},
  }
}

function terminalStatus(r: ReplyContent): 'completed' | 'incomplete' {
  return r.finishReason === 'length' || r.finishReason === 'content_filter'
    ? 'incomplete'
    : 'completed'
}

export function responsesFrames(r: ReplyContent): string[] {
  const frames: string[] = []
  let sequence = 0
  const emit = (type: string, payload: Json) => {
    frames.push(
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...payload })}\n\n`,
    )
  }
  emit('response.created', { response: responseObject(r, 'in_progress') })
  emit('response.in_progress', { response: responseObject(r, 'in_progress') })
  const items = outputItems(r)
  items.forEach((item, output_index) => {
    const item_id = String(item.id)
    if (item.type === 'reasoning') {
      emit('response.output_item.added', { output_index, item: { ...item, summary: [] } })
      const part = { type: 'summary_text', text: '' }
      emit('response.reasoning_summary_part.added', {
        item_id,
        output_index,
        summary_index: 0,
        part,
      })
      for (const delta of split(r.reasoning, r.chunkSize)) {
        emit('response.reasoning_summary_text.delta', {
          item_id,
          output_index,
          summary_index: 0,
          delta,
        })
      }
      const text = r.reasoning
      emit('response.reasoning_summary_text.done', {
        item_id,
        output_index,
        summary_index: 0,
        text,
      })
      emit('response.reasoning_summary_part.done', {
        item_id,
        output_index,
        summary_index: 0,
        part: { type: 'summary_text', text },
      })
    } else if (item.type === 'message') {
      const open = { ...item, status: 'in_progress', content: [] }
      emit('response.output_item.added', { output_index, item: open })
      const where = { item_id, output_index, content_index: 0 }
      const empty = { type: 'output_text', annotations: [], logprobs: [], text: '' }
      emit('response.content_part.added', { ...where, part: empty })
      for (const delta of split(r.text, r.chunkSize)) {
        emit('response.output_text.delta', { ...where, delta, logprobs: [] })
      }
      emit('response.output_text.done', { ...where, text: r.text, logprobs: [] })
      emit('response.content_part.done', { ...where, part: { ...empty, text: r.text } })
    } else {
      const args = String(item.arguments)
      emit('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      })
      for (const delta of split(args, r.chunkSize)) {
        emit('response.function_call_arguments.delta', { item_id, output_index, delta })
      }
      emit('response.function_call_arguments.done', { item_id, output_index, arguments: args })
    }
    emit('response.output_item.done', { output_index, item })
  })
  const status = terminalStatus(r)
  emit(status === 'completed' ? 'response.completed' : 'response.incomplete', {
    response: responseObject(r, status),
  })
  return frames
}
