import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import type { AssistantMessage, HistoryMessage } from '../../src/contract/history-message.ts'
import { fileDataUrl, sentFile, type UserFile } from '../../src/contract/stored-file.ts'
import { sentImage } from '../../src/contract/stored-image.ts'
import type { UserImage } from '../../src/contract/turn-input.ts'
import { ProviderStreamError } from './model-failure.ts'
import type { ProviderProfile } from './provider-profile.ts'

/** A Chat assistant message with the reasoning field the OpenAI SDK's types do not name. */
type AssistantParam = Extract<ChatCompletionMessageParam, { role: 'assistant' }> & {
  reasoning_content?: string
  reasoning?: string
}

/** One transcript message → the Chat Completions message the provider expects. */
export function toChatMessage(
  message: HistoryMessage,
  profile: ProviderProfile,
): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content }
    case 'user':
      return message.images || message.files
        ? {
            role: 'user',
            content: [
              ...textPart(message.content),
              ...(message.images ?? []).map((image) => imagePart(sentImage(image))),
              ...(message.files ?? []).map((file) => filePart(sentFile(file))),
            ],
          }
        : { role: 'user', content: message.content }
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id, content: message.content }
    case 'assistant':
      return toChatAssistant(message, profile)
    case 'compaction':
      throw new ProviderStreamError(
        'the transcript holds an OpenAI Responses compaction item, which the Chat Completions API cannot read: use a model with api "responses", or compact the session locally first',
        'unsupported_compaction_item',
        'bad_request',
      )
  }
}

/** A user message's text as a Chat content part (none when it is only images). */
const textPart = (text: string): ChatCompletionContentPart[] =>
  text === '' ? [] : [{ type: 'text', text }]

/** An image of a user message as a Chat `image_url` part. */
const imagePart = (image: UserImage): ChatCompletionContentPart => ({
  type: 'image_url',
  image_url: { url: image.url, ...(image.detail ? { detail: image.detail } : {}) },
})

/** A document of a user message as a Chat `file` part (base64 as a `data:` URL). */
const filePart = (file: UserFile): ChatCompletionContentPart => ({
  type: 'file',
  file: { filename: file.filename, file_data: fileDataUrl(file) },
})

function toChatAssistant(message: AssistantMessage, profile: ProviderProfile): AssistantParam {
  const calls = message.tool_calls ?? []
  const param: AssistantParam =
    calls.length === 0
      ? { role: 'assistant', content: message.content }
      : {
          role: 'assistant',
          content: message.content === '' ? null : message.content,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }
  const echo = reasoningEcho(message, profile)
  if (echo) param[echo.field] = echo.text
  return param
}

/**
 * The reasoning a Chat assistant message carries back, by the provider's rule (see
 * ProviderProfile.reasoningEcho): the text of the Chat reasoning blocks the answer streamed, in
 * the field it streamed in — `reasoning_content` where the provider requires it, with an empty
 * string on a tool-call message that has none. Reasoning of another API (a Responses item, an
 * Anthropic thinking block) never goes to a Chat provider.
 */
export function reasoningEcho(
  message: AssistantMessage,
  profile: ProviderProfile,
): { field: 'reasoning_content' | 'reasoning'; text: string } | undefined {
  if (profile.reasoningEcho === 'never') return undefined
  let text: string | undefined
  let field: 'reasoning_content' | 'reasoning' | undefined
  for (const block of message.reasoning ?? []) {
    if (block.type !== 'text' || block.field === 'thinking') continue
    text = (text ?? '') + block.text
    field ??= block.field
  }
  if (profile.reasoningEcho === 'required') {
    if (text !== undefined) return { field: 'reasoning_content', text }
    return message.tool_calls?.length ? { field: 'reasoning_content', text: '' } : undefined
  }
  return text === undefined ? undefined : { field: field ?? 'reasoning_content', text }
}
