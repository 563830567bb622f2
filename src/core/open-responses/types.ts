import type { JsonValue } from '../../contract/json-value.ts'
import type { ToolChoice } from '../../contract/tool-choice.ts'

/**
 * The Open Responses shapes the bridge produces (openresponses.org, schema version 2026-04-24):
 * output items, the response resource and the streaming events. Items and events the
 * specification does not define carry the implementor prefix `vtcode:` (its "Extending Items"
 * and "Extending streaming events"), so clients that do not know them can ignore them.
 */

/** Status of a standard item (message, reasoning). */
export type ItemStatus = 'in_progress' | 'completed' | 'incomplete'

/** Status of a `vtcode:*` item: what VT Code writes, `failed` included. */
export type ExtensionItemStatus = 'in_progress' | 'completed' | 'failed'

export interface OutputTextPart {
  type: 'output_text'
  text: string
  annotations: JsonValue[]
  logprobs: JsonValue[]
}

export interface SummaryTextPart {
  type: 'summary_text'
  text: string
}

export interface ReasoningTextPart {
  type: 'reasoning_text'
  text: string
}

export interface MessageOutputItem {
  type: 'message'
  id: string
  status: ItemStatus
  role: 'assistant'
  content: OutputTextPart[]
}

export interface ReasoningOutputItem {
  type: 'reasoning'
  id: string
  status: ItemStatus
  summary: SummaryTextPart[]
  content: ReasoningTextPart[]
}

/**
 * A `vtcode:*` item, laid out as VT Code's custom items: id, type and status, the item's own
 * fields under `data` (absent fields as null).
 */
export interface ExtensionOutputItem {
  type: `vtcode:${string}`
  id: string
  status: ExtensionItemStatus
  data: { [field: string]: JsonValue }
}

/** A call of one of the client's function tools: the client runs it and sends the output back. */
export interface FunctionCallOutputItem {
  type: 'function_call'
  id: string
  call_id: string
  name: string
  /** The arguments as JSON text. */
  arguments: string
  status: ItemStatus
}

export type OutputItem =
  | MessageOutputItem
  | ReasoningOutputItem
  | FunctionCallOutputItem
  | ExtensionOutputItem

export interface OpenUsage {
  input_tokens: number
  output_tokens: number
  total_tokens: number
  input_tokens_details: { cached_tokens: number }
  /** The engine's count of reasoning tokens (within output_tokens); 0 when not counted. */
  output_tokens_details: { reasoning_tokens: number }
}

export type ResponseStatus =
  | 'queued'
  | 'in_progress'
  | 'completed'
  | 'failed'
  | 'incomplete'
  | 'cancelled'

export interface ResponseError {
  code: 'model_error' | 'server_error'
  message: string
}

/** What a response echoes of its request (the specification requires every field). */
export interface ResponseSettings {
  model: string
  instructions: string | null
  temperature: number
  top_p: number
  max_output_tokens: number | null
  max_tool_calls: number | null
  metadata: { [key: string]: string }
  /** The client's function tools, as the response lists them. */
  tools: FunctionToolEcho[]
  previous_response_id: string | null
  /** The answer's format (`json_schema`: the answer is checked against it). */
  text_format: TextFormatEcho
  tool_choice: ToolChoice
  parallel_tool_calls: boolean
  store: boolean
  /** Created with `background: true` (absent: false). */
  background?: boolean
}

/** The answer's format as the response lists it: plain text, or JSON following a schema. */
export type TextFormatEcho =
  | { type: 'text' }
  | {
      type: 'json_schema'
      name: string
      description: string | null
      schema: { [key: string]: JsonValue }
      strict: boolean
    }

/** A function tool as the response resource lists it (every field the schema requires). */
export interface FunctionToolEcho {
  type: 'function'
  name: string
  description: string | null
  parameters: { [key: string]: JsonValue } | null
  strict: boolean | null
}

/** The response resource (`ResponseResource`), every required field present. */
export interface ResponseObject {
  id: string
  object: 'response'
  created_at: number
  completed_at: number | null
  status: ResponseStatus
  incomplete_details: { reason: string } | null
  model: string
  previous_response_id: string | null
  instructions: string | null
  output: OutputItem[]
  error: ResponseError | null
  tools: FunctionToolEcho[]
  tool_choice: ToolChoice
  truncation: 'auto'
  parallel_tool_calls: boolean
  text: { format: TextFormatEcho }
  top_p: number
  presence_penalty: number
  frequency_penalty: number
  top_logprobs: number
  temperature: number
  reasoning: null
  usage: OpenUsage | null
  max_output_tokens: number | null
  max_tool_calls: number | null
  store: boolean
  background: boolean
  service_tier: string
  metadata: { [key: string]: string }
  safety_identifier: null
  prompt_cache_key: null
}

interface ItemRef {
  item_id: string
  output_index: number
}

/** A streaming event as written, `sequence_number` included. */
export type StreamEvent =
  | {
      type:
        | 'response.created'
        | 'response.in_progress'
        | 'response.completed'
        | 'response.failed'
        | 'response.incomplete'
      sequence_number: number
      response: ResponseObject
    }
  | {
      type: 'response.output_item.added' | 'response.output_item.done'
      sequence_number: number
      output_index: number
      item: OutputItem
    }
  | ({
      type: 'response.content_part.added' | 'response.content_part.done'
      sequence_number: number
      content_index: number
      part: OutputTextPart
    } & ItemRef)
  | ({
      type: 'response.output_text.delta'
      sequence_number: number
      content_index: number
      delta: string
      logprobs: JsonValue[]
    } & ItemRef)
  | ({
      type: 'response.output_text.done'
      sequence_number: number
      content_index: number
      text: string
      logprobs: JsonValue[]
    } & ItemRef)
  | ({
      type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done'
      sequence_number: number
      summary_index: number
      part: SummaryTextPart
    } & ItemRef)
  | ({
      type: 'response.reasoning_summary_text.delta'
      sequence_number: number
      summary_index: number
      delta: string
    } & ItemRef)
  | ({
      type: 'response.reasoning_summary_text.done'
      sequence_number: number
      summary_index: number
      text: string
    } & ItemRef)
  | ({
      type: 'response.function_call_arguments.delta'
      sequence_number: number
      delta: string
    } & ItemRef)
  | ({
      type: 'response.function_call_arguments.done'
      sequence_number: number
      arguments: string
    } & ItemRef)
  | ({
      /** Live output of a server-run tool (a `vtcode:tool_output` item). */
      type: 'vtcode:tool_output.delta'
      sequence_number: number
      delta: string
    } & ItemRef)
  | {
      /** A VT Code lifecycle event (`thread.completed`, compaction, context reset, plans). */
      type: `vtcode:${string}`
      sequence_number: number
      response_id: string
      data: { [key: string]: JsonValue }
    }

export type StreamEventType = StreamEvent['type']
