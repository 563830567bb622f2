import type { JsonValue } from '../../contract/json-value.ts'

/**
 * The Open Responses shapes the bridge produces (openresponses.org): output items, the response
 * object and the streaming events. Non-standard items carry the implementor slug `vtcode:`.
 */

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete'

export interface OutputTextPart {
  type: 'output_text'
  text: string
  annotations: JsonValue[]
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
  summary: JsonValue[]
  content: { type: 'reasoning_text'; text: string }[]
}

export interface FunctionCallOutputItem {
  type: 'function_call'
  id: string
  status: ItemStatus
  call_id: string
  name: string
  /** JSON text of the arguments ("" while they stream). */
  arguments: string
}

export interface FunctionCallResultItem {
  type: 'function_call_output'
  id: string
  status: ItemStatus
  call_id: string
  output: string
}

/** A `vtcode:*` extension item: id, type and status, then the item's own fields. */
export interface ExtensionOutputItem {
  type: `vtcode:${string}`
  id: string
  status: ItemStatus
  [field: string]: JsonValue
}

export type OutputItem =
  | MessageOutputItem
  | ReasoningOutputItem
  | FunctionCallOutputItem
  | FunctionCallResultItem
  | ExtensionOutputItem

export interface OpenUsage {
  input_tokens: number
  output_tokens: number
  total_tokens: number
  /** Present only when some input tokens were cached. */
  input_tokens_details?: { cached_tokens: number }
}

export type ResponseStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'incomplete'

export interface ResponseError {
  code: 'model_error' | 'server_error'
  message: string
}

export interface ResponseObject {
  id: string
  object: 'response'
  created_at: number
  completed_at: number | null
  status: ResponseStatus
  model: string
  output: OutputItem[]
  usage: OpenUsage | null
  error: ResponseError | null
}

/** A streaming event as written, `sequence_number` included. */
export type StreamEvent =
  | {
      type: 'response.created' | 'response.in_progress'
      sequence_number: number
      response: ResponseObject
    }
  | {
      type: 'response.completed' | 'response.failed'
      sequence_number: number
      response: ResponseObject
    }
  | {
      type: 'response.output_item.added' | 'response.output_item.done'
      sequence_number: number
      output_index: number
      item: OutputItem
    }
  | {
      type: 'response.content_part.added' | 'response.content_part.done'
      sequence_number: number
      item_id: string
      output_index: number
      content_index: number
      part: OutputTextPart
    }
  | {
      type: 'response.output_text.delta' | 'response.reasoning.delta'
      sequence_number: number
      item_id: string
      output_index: number
      content_index: number
      delta: string
    }
  | {
      type: 'response.output_text.done' | 'response.reasoning.done'
      sequence_number: number
      item_id: string
      output_index: number
      content_index: number
      text: string
    }
  | {
      type: 'response.function_call_arguments.done'
      sequence_number: number
      item_id: string
      output_index: number
      arguments: string
    }
  | {
      type: 'response.custom_event'
      response_id: string
      event_type: `vtcode.${string}`
      sequence_number: number
      data: { [key: string]: JsonValue }
    }

export type StreamEventType = StreamEvent['type']
