import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses'
import type { AssistantMessage, HistoryMessage } from '../../src/contract/history-message.ts'
import { ANSWER_PART_SEPARATOR } from '../../src/contract/history-message.ts'
import type { ModelRequest } from '../../src/ports/model-client.ts'
import { OUTPUT_SCHEMA_NAME } from './output-schema-format.ts'
import { cacheKeyField, type ProviderProfile } from './provider-profile.ts'
import { toolChoiceFields } from './tool-choice-fields.ts'

/** One history message → Responses input items (an assistant turn may yield several). */
export function toResponsesInput(message: HistoryMessage): ResponseInputItem[] {
  switch (message.role) {
    case 'system':
      return [{ type: 'message', role: message.role, content: message.content }]
    case 'user':
      return [
        {
          type: 'message',
          role: 'user',
          content: message.images
            ? [
                ...(message.content === ''
                  ? []
                  : [{ type: 'input_text' as const, text: message.content }]),
                ...message.images.map((image) => ({
                  type: 'input_image' as const,
                  image_url: image.url,
                  detail: image.detail ?? ('auto' as const),
                })),
              ]
            : message.content,
        },
      ]
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.tool_call_id, output: message.content },
      ]
    case 'assistant': {
      const items: ResponseInputItem[] = [...reasoningItems(message), ...answerItems(message)]
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

export function responsesRequestBody(
  request: ModelRequest,
  profile: ProviderProfile,
): ResponseCreateParamsStreaming {
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
    // Every call carries the full history; nothing needs to persist at the provider, so the
    // reasoning comes back encrypted, to go back in with the next request.
    store: false,
    ...(reasonsEncrypted(request) ? { include: ['reasoning.encrypted_content' as const] } : {}),
    ...cacheKeyField(request, profile),
    ...(tools.length > 0
      ? { tools, ...toolChoiceFields(request, (name) => ({ type: 'function' as const, name })) }
      : {}),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { max_output_tokens: request.maxOutputTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.reasoningEffort === undefined && request.reasoningSummary === undefined
      ? {}
      : {
          reasoning: {
            ...(request.reasoningEffort === undefined ? {} : { effort: request.reasoningEffort }),
            ...(request.reasoningSummary === undefined
              ? {}
              : { summary: request.reasoningSummary }),
          },
        }),
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
  }
}

/**
 * The Responses reasoning items of an assistant message, as they came: only those with their
 * `encrypted_content` (every request is `store: false`, so the provider cannot look an item up by
 * its id); reasoning of other APIs is not for this one.
 */
function reasoningItems(message: AssistantMessage): ResponseInputItem[] {
  const items: ResponseInputItem[] = []
  for (const block of message.reasoning ?? []) {
    if (block.type !== 'openai_reasoning' || block.encrypted_content === undefined) continue
    items.push({
      type: 'reasoning',
      id: block.id,
      summary: block.summary.map((text) => ({ type: 'summary_text' as const, text })),
      ...(block.content
        ? { content: block.content.map((text) => ({ type: 'reasoning_text' as const, text })) }
        : {}),
      encrypted_content: block.encrypted_content,
    })
  }
  return items
}

/**
 * The answer as message items: one per part with its phase when the answer came as several (and
 * the parts still make up the content), else one message — none for a tool call without text.
 */
function answerItems(message: AssistantMessage): ResponseInputItem[] {
  const parts = message.parts
  if (parts && parts.map((part) => part.text).join(ANSWER_PART_SEPARATOR) === message.content) {
    return parts.map((part) => ({
      type: 'message' as const,
      role: 'assistant' as const,
      content: part.text,
      ...(part.phase === undefined ? {} : { phase: part.phase }),
    }))
  }
  if (message.content === '' && message.tool_calls?.length) return []
  return [{ type: 'message', role: 'assistant', content: message.content }]
}

/**
 * Models that reason, whose reasoning items the provider hands out encrypted for the next
 * request: the o-series, gpt-5 and later, codex and gpt-oss, or any model given a reasoning
 * setting. Asking a model that does not reason for them is an error at OpenAI.
 */
export function reasonsEncrypted(request: ModelRequest): boolean {
  if (request.reasoningEffort !== undefined || request.reasoningSummary !== undefined) return true
  const name = (request.model.split('/').pop() ?? request.model).toLowerCase()
  return /^(o\d|gpt-[5-9]|gpt-\d{2,}|codex|gpt-oss)/.test(name)
}
