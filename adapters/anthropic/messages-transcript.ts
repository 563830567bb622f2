import type {
  Base64ImageSource,
  ContentBlockParam,
  DocumentBlockParam,
  ImageBlockParam,
  MessageParam,
  TextBlockParam,
} from '@anthropic-ai/sdk/resources/messages'
import { answerBlocks } from '../../src/contract/answer-blocks.ts'
import type { AssistantMessage, HistoryMessage } from '../../src/contract/history-message.ts'
import { sentFile, type UserFile } from '../../src/contract/stored-file.ts'
import { sentImage } from '../../src/contract/stored-image.ts'
import type { UserImage } from '../../src/contract/turn-input.ts'
import { parseJsonObject } from '../../src/shared/json-object.ts'
import { ProviderStreamError } from '../shared/model-failure.ts'

/** A Messages API request's `system` blocks and `messages`, from a transcript. */
export interface AnthropicTranscript {
  system: TextBlockParam[]
  messages: MessageParam[]
}

/**
 * The transcript (OpenAI chat shape, provider-neutral) as the Messages API takes it:
 *
 * - the leading system messages (the session's system prompt, a compaction's memory envelope)
 *   become the request's `system` blocks, one each, in order; a system message later in the
 *   transcript (a fork summary after a user message) becomes user text, as the Messages API has
 *   no system turn inside the conversation on every platform;
 * - a user message's images become `image` blocks after its text (base64 from a `data:` URL,
 *   else the URL for the API to fetch), its documents (PDFs) `document` blocks after them;
 * - an assistant message becomes its reasoning blocks (`thinking` with its `signature`,
 *   `redacted_thinking`, unchanged), its texts and one `tool_use` per call, in the order the API
 *   gave them (interleaved thinking between tool uses goes back where it was; without a kept
 *   order: thinking, text, tools); reasoning of another API (Chat reasoning text, a Responses
 *   item) is left out;
 * - tool results become `tool_result` blocks of a user message, and consecutive user-side
 *   blocks share one message (the API wants the roles to alternate; parallel tool results go in
 *   one message after the assistant's `tool_use` blocks), the tool results first: the API
 *   refuses a message after `tool_use` blocks that does not begin with their results (a user or
 *   system message the transcript holds between a call and its result goes after the results).
 */
export function toAnthropicTranscript(history: HistoryMessage[]): AnthropicTranscript {
  const system: TextBlockParam[] = []
  const messages: MessageParam[] = []
  const push = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    if (blocks.length === 0) return
    const last = messages.at(-1)
    if (last?.role !== role || !Array.isArray(last.content)) {
      messages.push({ role, content: blocks })
    } else if (blocks.every((block) => block.type === 'tool_result')) {
      // Tool results open their message (the API refuses text before them).
      const at = last.content.findIndex((block) => block.type !== 'tool_result')
      last.content.splice(at < 0 ? last.content.length : at, 0, ...blocks)
    } else last.content.push(...blocks)
  }
  for (const message of history) {
    switch (message.role) {
      case 'system':
        if (messages.length === 0) {
          if (message.content !== '') system.push({ type: 'text', text: message.content })
        } else push('user', textBlocks(message.content))
        break
      case 'user':
        push('user', [
          ...textBlocks(message.content),
          ...(message.images ?? []).map((image) => imageBlock(sentImage(image))),
          ...(message.files ?? []).map((file) => documentBlock(sentFile(file))),
        ])
        break
      case 'tool':
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: message.tool_call_id,
            content: message.content === '' ? [] : [{ type: 'text', text: message.content }],
          },
        ])
        break
      case 'assistant':
        push('assistant', assistantBlocks(message))
        break
      case 'compaction':
        throw new ProviderStreamError(
          'the transcript holds an OpenAI Responses compaction item, which the Anthropic Messages API cannot read: compact the session locally first (harness.provider_compaction: false)',
          'unsupported_compaction_item',
          'bad_request',
        )
    }
  }
  return { system, messages }
}

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,(.*)$/s

/**
 * An image of a user message as an `image` block: a `data:` URL as a base64 source, an https URL
 * as a URL source (the API fetches it).
 */
function imageBlock(image: UserImage): ImageBlockParam {
  const data = DATA_URL.exec(image.url)
  if (data?.[1] && data[2] !== undefined) {
    const mediaType = data[1] as Base64ImageSource['media_type']
    return { type: 'image', source: { type: 'base64', media_type: mediaType, data: data[2] } }
  }
  return { type: 'image', source: { type: 'url', url: image.url } }
}

/** A document of a user message (a PDF) as a `document` block with a base64 source. */
function documentBlock(file: UserFile): DocumentBlockParam {
  return {
    type: 'document',
    source: { type: 'base64', media_type: file.media_type, data: file.data },
    title: file.filename,
  }
}

/** Text as a content block; an empty text is no block (the API refuses empty text blocks). */
function textBlocks(text: string): TextBlockParam[] {
  return text === '' ? [] : [{ type: 'text', text }]
}

/** An answer's blocks in the order the API gave them (`answerBlocks`), those of this API only. */
function assistantBlocks(message: AssistantMessage): ContentBlockParam[] {
  return answerBlocks(message).flatMap((entry): ContentBlockParam[] => {
    if (entry.kind === 'text') return textBlocks(entry.part.text)
    if (entry.kind === 'tool_call') {
      const { id, name, arguments: args } = entry.call
      return [{ type: 'tool_use', id, name, input: toolInput(args) }]
    }
    const block = entry.block
    if (block.type === 'anthropic_thinking') {
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature }]
    }
    return block.type === 'anthropic_redacted_thinking'
      ? [{ type: 'redacted_thinking', data: block.data }]
      : []
  })
}

/**
 * A call's arguments as the `input` object the API takes back: the JSON the model streamed,
 * or `{}` when it is not an object (an answer cut at max_tokens mid-call, or no arguments).
 */
export function toolInput(raw: string): Record<string, unknown> {
  // Not an object: sent back as no arguments; the tool result already said why it did not run.
  return parseJsonObject(raw) ?? {}
}
