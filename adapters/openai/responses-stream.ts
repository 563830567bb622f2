import type OpenAI from 'openai'
import type {
  FunctionTool,
  Response,
  ResponseCreateParamsStreaming,
  ResponseInputItem,
  ResponseUsage,
} from 'openai/resources/responses/responses'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { Usage } from '../../src/contract/usage.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'
import type { ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { ProviderStreamError } from './model-failure.ts'
import { OUTPUT_SCHEMA_NAME } from './output-schema-format.ts'
import { ToolCallAssembler } from './tool-call-assembler.ts'

/** One history message → Responses input items (an assistant turn may yield several). */
export function toResponsesInput(message: HistoryMessage): ResponseInputItem[] {
  switch (message.role) {
    case 'system':
    case 'user':
      return [{ type: 'message', role: message.role, content: message.content }]
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.tool_call_id, output: message.content },
      ]
    case 'assistant': {
      const items: ResponseInputItem[] = []
      if (message.content !== '' || !message.tool_calls?.length) {
        items.push({ type: 'message', role: 'assistant', content: message.content })
      }
      for (const call of message.tool_calls ?? []) {
        items.push({
          type: 'function_call',
          call_id: call.id,
          name: call.name,
          arguments: call.arguments,
        })
      }
      return items
    }
    case 'compaction':
      return [
        {
          type: 'compaction',
          encrypted_content: message.encrypted_content,
          ...(message.id === undefined ? {} : { id: message.id }),
        },
      ]
  }
}

export function responsesRequestBody(request: ModelRequest): ResponseCreateParamsStreaming {
  // strict defaults to true on this API, which rejects ordinary JSON Schemas.
  const tools: FunctionTool[] = request.tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: tool.parameters,
    strict: false,
  }))
  return {
    model: request.model,
    input: request.messages.flatMap(toResponsesInput),
    stream: true,
    // Every call carries the full history; nothing needs to persist at the provider.
    store: false,
    ...(tools.length > 0 ? { tools } : {}),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { max_output_tokens: request.maxOutputTokens }),
    ...(request.outputSchema === undefined
      ? {}
      : {
          text: {
            format: {
              type: 'json_schema',
              name: OUTPUT_SCHEMA_NAME,
              schema: request.outputSchema,
              strict: true,
            },
          },
        }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
  }
}

export function normalizeResponsesUsage(usage: ResponseUsage | null | undefined): Usage {
  if (!usage) return { ...ZERO_USAGE }
  return {
    input_tokens: usage.input_tokens ?? 0,
    cached_input_tokens: usage.input_tokens_details?.cached_tokens ?? 0,
    cache_creation_tokens: 0,
    output_tokens: usage.output_tokens ?? 0,
  }
}

/** Maps status/incomplete_details onto Chat-style finish reasons. */
export function responsesStopReason(response: Response, hasToolCalls: boolean): string {
  if (response.status === 'incomplete') {
    const reason = response.incomplete_details?.reason
    if (reason === 'max_output_tokens') return 'length'
    return reason ?? 'incomplete'
  }
  if (response.status === undefined || response.status === 'completed') {
    return hasToolCalls ? 'tool_calls' : 'stop'
  }
  return response.status
}

function outputText(response: Response): string {
  let text = ''
  for (const item of response.output ?? []) {
    if (item.type !== 'message') continue
    for (const part of item.content) text += part.type === 'output_text' ? part.text : part.refusal
  }
  return text
}

/** Streams one Responses API response; the caller owns retries and abort checks. */
export async function* streamResponses(
  client: OpenAI,
  request: ModelRequest,
): AsyncGenerator<ModelStreamEvent> {
  const stream = await client.responses.create(
    responsesRequestBody(request),
    request.signal ? { signal: request.signal } : {},
  )
  let text = ''
  let reasoning = ''
  let final: Response | undefined
  const calls = new ToolCallAssembler()
  const callIndexByOutput = new Map<number, number>()

  for await (const event of stream) {
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        text += event.delta
        yield { type: 'text_delta', text: event.delta }
        break
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        reasoning += event.delta
        yield { type: 'reasoning_delta', text: event.delta }
        break
      case 'response.output_item.added':
        if (event.item.type === 'function_call') {
          const index = calls.size
          callIndexByOutput.set(event.output_index, index)
          yield calls.add(index, event.item.call_id, event.item.name, event.item.arguments ?? '')
        }
        break
      case 'response.function_call_arguments.delta': {
        const index = callIndexByOutput.get(event.output_index)
        if (index !== undefined) yield calls.add(index, undefined, undefined, event.delta)
        break
      }
      case 'response.output_item.done':
        if (event.item.type === 'function_call') {
          const index = callIndexByOutput.get(event.output_index) ?? calls.size
          callIndexByOutput.set(event.output_index, index)
          calls.settle(index, event.item.call_id, event.item.name, event.item.arguments)
        }
        break
      case 'response.completed':
      case 'response.incomplete':
        final = event.response
        break
      case 'response.failed': {
        const error = event.response.error
        throw new ProviderStreamError(error?.message ?? 'response failed', error?.code)
      }
      case 'error':
        throw new ProviderStreamError(event.message, event.code)
    }
  }

  // The SDK ends the iteration quietly when the request is aborted mid-body.
  request.signal?.throwIfAborted()
  if (final === undefined) {
    throw new ProviderStreamError(
      'stream ended before response.completed',
      'stream_truncated',
      'network',
    )
  }
  const toolCalls = calls.finish()
  yield {
    type: 'completed',
    response: {
      text: text === '' ? outputText(final) : text,
      toolCalls,
      usage: normalizeResponsesUsage(final.usage),
      stopReason: responsesStopReason(final, toolCalls.length > 0),
      ...(reasoning === '' ? {} : { reasoning }),
    },
  }
}
