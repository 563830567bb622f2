import type {
  FunctionTool,
  ResponseCreateParamsStreaming,
  ResponseInputItem,
} from 'openai/resources/responses/responses'
import { answerBlocks } from '../../src/contract/answer-blocks.ts'
import type { AssistantMessage, HistoryMessage } from '../../src/contract/history-message.ts'
import { fileDataUrl, sentFile } from '../../src/contract/stored-file.ts'
import { sentImage } from '../../src/contract/stored-image.ts'
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
          content:
            message.images || message.files
              ? [
                  ...(message.content === ''
                    ? []
                    : [{ type: 'input_text' as const, text: message.content }]),
                  ...(message.images ?? []).map(sentImage).map((image) => ({
                    type: 'input_image' as const,
                    image_url: image.url,
                    detail: image.detail ?? ('auto' as const),
                  })),
                  ...(message.files ?? []).map(sentFile).map((file) => ({
                    type: 'input_file' as const,
                    filename: file.filename,
                    file_data: fileDataUrl(file),
                  })),
                ]
              : message.content,
        },
      ]
    case 'tool':
      return [
        { type: 'function_call_output', call_id: message.tool_call_id, output: message.content },
      ]
    case 'assistant':
      return assistantItems(message)
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
 * An assistant message as Responses input items, in the order the provider gave them
 * (`answerBlocks`: a reasoning item goes back right before the call or message it led to, as the
 * API requires): its reasoning items — only those with their `encrypted_content` (every request
 * is `store: false`, so the provider cannot look an item up by its id; reasoning of other APIs
 * is not for this one) —, one message item per part with its phase (one message when the answer
 * came as one; none for a tool call without text), and its function calls.
 */
function assistantItems(message: AssistantMessage): ResponseInputItem[] {
  const blocks = answerBlocks(message)
  const items = blocks.flatMap((entry): ResponseInputItem[] => {
    if (entry.kind === 'text') {
      const { text, phase } = entry.part
      return [{ type: 'message', role: 'assistant', content: text, ...(phase ? { phase } : {}) }]
    }
    if (entry.kind === 'tool_call') {
      const { id, name, arguments: args } = entry.call
      return [{ type: 'function_call', call_id: id, name, arguments: args }]
    }
    const block = entry.block
    if (block.type !== 'openai_reasoning' || block.encrypted_content === undefined) return []
    return [
      {
        type: 'reasoning',
        id: block.id,
        summary: block.summary.map((text) => ({ type: 'summary_text' as const, text })),
        ...(block.content
          ? { content: block.content.map((text) => ({ type: 'reasoning_text' as const, text })) }
          : {}),
        encrypted_content: block.encrypted_content,
      },
    ]
  })
  const spoke = blocks.some((entry) => entry.kind !== 'reasoning')
  return spoke
    ? items
    : [...items, { type: 'message', role: 'assistant', content: message.content }]
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
