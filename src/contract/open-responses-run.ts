import type { TurnStatus } from './api.ts'
import { TurnlineError } from './errors.ts'
import type { HistoryMessage } from './history-message.ts'
import type { ModelSettingsInput } from './model-config.ts'
import { withResolvedFiles } from './open-responses-files.ts'
import { seededHistory } from './open-responses-history.ts'
import type { InputItem, MessageItem } from './open-responses-input.ts'
import { encodeResponseRecord, RESPONSE_RECORD_KEY } from './open-responses-record.ts'
import { DEFAULT_MODEL_LABEL, type ResponsesRequest } from './open-responses-request.ts'
import type { SessionConfigInput } from './session-config.ts'
import type { UserFile } from './stored-file.ts'
import type { ThreadEvent } from './thread-event.ts'
import { type ToolChoice, toolChoiceNames } from './tool-choice.ts'
import type { InputPart, TurnInput } from './turn-input.ts'
import type { Usage } from './usage.ts'

/**
 * What a `POST /v1/responses` request becomes: the config of its session, the transcript the
 * session starts with (the conversation the input carries before its last user messages), and
 * the input of its turn (those user messages; none when the input ends with function outputs,
 * which the model then reads). System and developer messages join the instructions; reasoning
 * items are not replayed (a provider's reasoning goes back only to the call that made it).
 */
export interface ResponseRun {
  config: SessionConfigInput
  history: HistoryMessage[]
  input?: TurnInput
  /** The input held a compaction item: `history` starts there (no earlier conversation). */
  compacted?: true
}

type Message = Extract<InputItem, { type: 'message' }>

export function toResponseRun(request: ResponsesRequest, createdAt: number): ResponseRun {
  const items: InputItem[] =
    typeof request.input === 'string'
      ? [{ type: 'message', role: 'user', content: request.input }]
      : withResolvedFiles(request.input)
  const instructions = [
    request.instructions ?? '',
    ...items.flatMap((item, i) => (isInstruction(item) ? [instructionText(item, i)] : [])),
  ]
    .filter((text) => text !== '')
    .join('\n\n')
  const conversation = items
    .map((item, index) => ({ item, index }))
    .filter(({ item }) => !isInstruction(item) && item.type !== 'reasoning')
  let split = conversation.length
  while (split > 0 && isUser(conversation[split - 1]?.item)) split -= 1
  const trailing = conversation.slice(split).map(({ item }) => item as Message)
  // The documents of the turn's messages go just before it, in a message of their own: a turn's
  // input holds text and images.
  const documents = seededHistory(trailing).flatMap((m) =>
    m.role === 'user' ? (m.files ?? []) : [],
  )
  const prompt =
    promptOf(trailing) ??
    (documents.length > 0 ? `Attached: ${documents.map((d) => d.filename).join(', ')}` : undefined)
  const before = conversation.slice(0, split).map(({ item }) => item)
  const attached: HistoryMessage[] =
    documents.length > 0 ? [{ role: 'user', content: '', files: documents as [UserFile] }] : []
  return {
    config: configOf(request, instructions, createdAt),
    history: [...seededHistory(before), ...attached],
    ...(prompt === undefined ? {} : { input: prompt }),
    ...(before.some((item) => item.type === 'compaction') ? { compacted: true as const } : {}),
  }
}

function configOf(
  request: ResponsesRequest,
  instructions: string,
  createdAt: number,
): SessionConfigInput {
  const sampling: Omit<ModelSettingsInput, 'name'> = {
    ...(request.temperature == null ? {} : { temperature: request.temperature }),
    ...(request.top_p == null ? {} : { top_p: request.top_p }),
    ...(request.max_output_tokens == null ? {} : { max_output_tokens: request.max_output_tokens }),
    ...(request.reasoning?.effort == null ? {} : { reasoning_effort: request.reasoning.effort }),
    ...(request.reasoning?.summary == null ? {} : { reasoning_summary: request.reasoning.summary }),
  }
  const format = request.text?.format
  // Sampling without a model name applies to the deployment's model.
  const sampled = Object.keys(sampling).length > 0
  const record = encodeResponseRecord({
    v: 1,
    created_at: createdAt,
    model: request.model ?? DEFAULT_MODEL_LABEL,
    max_tool_calls: request.max_tool_calls ?? null,
    previous_response_id: request.previous_response_id ?? null,
    ...(format?.type === 'json_schema' ? { text_format: format } : {}),
    ...(request.store === false ? { store: false as const } : {}),
    scoped_item_ids: true,
  })
  const tools = request.tools ?? []
  const choice = toolChoiceOf(request)
  return {
    ...(choice === undefined ? {} : { tool_choice: choice }),
    ...(request.parallel_tool_calls === false ? { parallel_tool_calls: false } : {}),
    ...(format?.type === 'json_schema' ? { output_schema: format.schema } : {}),
    ...(sampled
      ? { model: { ...(request.model == null ? {} : { name: request.model }), ...sampling } }
      : request.model == null
        ? {}
        : { model: request.model }),
    ...(instructions === '' ? {} : { instructions }),
    ...(request.max_tool_calls == null
      ? {}
      : { harness: { max_tool_calls: request.max_tool_calls } }),
    ...(tools.length === 0
      ? {}
      : {
          client_tools: tools.map((tool) => ({
            name: tool.name,
            description: tool.description ?? '',
            parameters: tool.parameters ?? { type: 'object', properties: {} },
            ...(tool.strict == null ? {} : { strict: tool.strict }),
          })),
        }),
    metadata: { ...request.metadata, [RESPONSE_RECORD_KEY]: record },
  }
}

/** The request's `tool_choice` (absent when `auto`); the functions it names must be in `tools`. */
function toolChoiceOf(request: ResponsesRequest): ToolChoice | undefined {
  const choice = request.tool_choice ?? undefined
  const offered = new Set((request.tools ?? []).map((tool) => tool.name))
  const unknown = toolChoiceNames(choice).filter((name) => !offered.has(name))
  if (unknown.length > 0) {
    throw new TurnlineError(
      'invalid_input',
      `tool_choice names ${unknown.map((n) => `"${n}"`).join(', ')}, which is not one of the request's function tools`,
      { details: { field: 'body.tool_choice' } },
    )
  }
  return choice === 'auto' ? undefined : choice
}

const isInstruction = (item: InputItem): item is Message =>
  item.type === 'message' && (item.role === 'system' || item.role === 'developer')

const isUser = (item: InputItem | undefined): boolean =>
  item?.type === 'message' && item.role === 'user'

function instructionText(message: MessageItem, index: number): string {
  if (typeof message.content === 'string') return message.content
  return message.content
    .map((part) => {
      if (part.type === 'input_text') return part.text
      throw new TurnlineError(
        'invalid_input',
        `a ${message.role} message holds input_text parts only`,
        { details: { field: `body.input[${index}].content` } },
      )
    })
    .join('')
}

/**
 * The turn's input from the trailing user messages: their texts joined by blank lines, as a
 * string — or, when they carry images, as parts (each message's text, then its images).
 */
function promptOf(users: Message[]): TurnInput | undefined {
  if (users.length === 0) return undefined
  const parts: InputPart[] = users.flatMap((message) =>
    typeof message.content === 'string'
      ? [{ type: 'input_text' as const, text: message.content }]
      : message.content.flatMap((part): InputPart[] =>
          part.type === 'input_text' || part.type === 'input_image'
            ? [part]
            : // Text a client wrote as output_text counts, as in an earlier user message.
              part.type === 'output_text'
              ? [{ type: 'input_text' as const, text: part.text }]
              : [],
        ),
  )
  const images = parts.filter((part) => part.type === 'input_image')
  if (images.length === 0) {
    const text = parts
      .map((part) => (part.type === 'input_text' ? part.text : ''))
      .filter((t) => t !== '')
      .join('\n\n')
    return text === '' ? undefined : text
  }
  return parts.filter((part) => part.type !== 'input_text' || part.text !== '')
}

export interface ResponseRunRequest {
  run: ResponseRun
  /** `resp_<session id>` of the response this one continues. */
  previousResponseId?: string
  /**
   * The transcript of the response this one continues, in hand instead of read from its session
   * (a `store: false` response a WebSocket connection keeps in its memory); with it,
   * `previousResponseId` is not looked up.
   */
  previousTranscript?: HistoryMessage[]
  /** `store: false`: answer the session's whole transcript before it is erased. */
  keepTranscript?: boolean
  /** The client's Idempotency-Key: the same key is the same response, run once. */
  idempotencyKey?: string
}

const RUN_ENDS = new Set(['turn.completed', 'turn.failed', 'thread.completed'])

/** Whether a ThreadEvent ends a response's turn (or its thread): its usage is then reported. */
export const endsResponseRun = (event: { type: string }): boolean => RUN_ENDS.has(event.type)

export interface ResponseRunResult {
  session_id: string
  events: ThreadEvent[]
  /** `waiting`: the model called a client's function and the turn waits for its output. */
  status: TurnStatus
  /** The usage of a turn that waits on the client, so far (its response reports it). */
  usage?: Usage
  /** `waiting` on the client's function calls; else the turn paused (timeout, quota). */
  waitingOnClient?: boolean
  /**
   * The reasoning tokens within the output tokens of the response's usage, as the engine counted
   * them (its session is the response's one turn); absent when the provider reported none.
   */
  reasoning_tokens?: number
  /** With `keepTranscript` on a `store: false` response: its whole conversation, outputs included. */
  transcript?: HistoryMessage[]
}
