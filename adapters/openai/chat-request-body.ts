import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ModelRequest, ToolDefinition } from '../../src/ports/model-client.ts'
import { toChatMessage } from './chat-messages.ts'
import { OUTPUT_SCHEMA_NAME } from './output-schema-format.ts'
import { cacheKeyField, type ProviderProfile } from './provider-profile.ts'
import { toolChoiceFields } from './tool-choice-fields.ts'

/** A streamed Chat Completions request. */
export function chatRequestBody(
  request: ModelRequest,
  profile: ProviderProfile,
): ChatCompletionCreateParamsStreaming {
  const tools = request.tools.map(chatTool)
  return {
    model: request.model,
    messages: request.messages.map((message) => toChatMessage(message, profile)),
    stream: true,
    stream_options: { include_usage: true },
    ...(tools.length > 0 ? { tools } : {}),
    ...optionFields(request, profile),
  }
}

/**
 * `chatRequestBody`'s JSON, byte for byte, with each transcript message's JSON written once per
 * message and provider profile and each tool's once per definition: a session's requests resend
 * the whole transcript and catalog, whose messages and definitions are the same objects from one
 * request to the next (never changed once made; the built-in tools' are constants). The pieces
 * are joined once, into a flat string: a string built by `+` or a template is a tree of pieces
 * that the request's `Buffer.byteLength` copies into a flat one again before it is sent.
 */
export function chatRequestText(request: ModelRequest, profile: ProviderProfile): string {
  let known = messageJsons.get(profile)
  if (known === undefined) {
    known = new WeakMap()
    messageJsons.set(profile, known)
  }
  const { messages, tools } = request
  const options = JSON.stringify(optionFields(request, profile))
  // Every piece in one array of the exact length, joined once.
  const parts = new Array<string>(2 * messages.length + 2 * tools.length + 4)
  let at = 0
  parts[at++] = `{"model":${JSON.stringify(request.model)},"messages":[`
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as HistoryMessage
    let json = known.get(message)
    if (json === undefined) {
      json = JSON.stringify(toChatMessage(message, profile))
      known.set(message, json)
    }
    if (i > 0) parts[at++] = ','
    parts[at++] = json
  }
  parts[at++] = '],"stream":true,"stream_options":{"include_usage":true}'
  for (let i = 0; i < tools.length; i++) {
    parts[at++] = i === 0 ? ',"tools":[' : ','
    parts[at++] = toolJson(tools[i] as ToolDefinition)
  }
  if (tools.length > 0) parts[at++] = ']'
  parts[at++] = options === '{}' ? '}' : `,${options.slice(1)}`
  parts.length = at
  return parts.join('')
}

const messageJsons = new WeakMap<ProviderProfile, WeakMap<HistoryMessage, string>>()
const toolJsons = new WeakMap<ToolDefinition, string>()

function toolJson(tool: ToolDefinition): string {
  let json = toolJsons.get(tool)
  if (json === undefined) {
    json = JSON.stringify(chatTool(tool))
    toolJsons.set(tool, json)
  }
  return json
}

function chatTool(tool: ToolDefinition): ChatCompletionTool {
  return {
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }
}

/** The request's members after its tools, in the order they are sent. */
function optionFields(
  request: ModelRequest,
  profile: ProviderProfile,
): Partial<ChatCompletionCreateParamsStreaming> {
  return {
    ...(request.tools.length > 0
      ? toolChoiceFields(request, (name) => ({ type: 'function' as const, function: { name } }))
      : {}),
    ...(request.maxOutputTokens === undefined
      ? {}
      : { max_completion_tokens: request.maxOutputTokens }),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.topP === undefined ? {} : { top_p: request.topP }),
    ...(request.reasoningEffort === undefined ? {} : { reasoning_effort: request.reasoningEffort }),
    ...cacheKeyField(request, profile),
    ...(request.outputSchema === undefined
      ? {}
      : {
          response_format: {
            type: 'json_schema',
            json_schema: { name: OUTPUT_SCHEMA_NAME, schema: request.outputSchema, strict: true },
          },
        }),
  }
}
