import type {
  AnswerBlockKind,
  AnswerPart,
  HistoryMessage,
  ReasoningBlock,
  ToolCall,
} from '../contract/history-message.ts'
import type { ModelApi } from '../contract/model-config.ts'
import type { Usage } from '../contract/usage.ts'

/** A function tool as offered to the model (JSON Schema parameters). */
export interface ToolDefinition {
  name: string
  description: string
  parameters: Record<string, unknown>
}

export type { ModelApi }

/**
 * What the model must do with the request's tools, when not its own choice (`auto`): call none,
 * call at least one, or call the named one. Sent only with tools.
 */
export type ModelToolChoice = 'none' | 'required' | { name: string }

export interface ModelRequest {
  model: string
  api: ModelApi
  messages: HistoryMessage[]
  tools: ToolDefinition[]
  /** Absent: the model chooses (`auto`). */
  toolChoice?: ModelToolChoice
  /** false: at most one tool call in the answer. Absent: the provider's default (several). */
  parallelToolCalls?: false
  maxOutputTokens?: number
  /** Sampling temperature and nucleus sampling; absent → the provider's defaults. */
  temperature?: number
  topP?: number
  /** `reasoning_effort` (Chat) / `reasoning.effort` (Responses). */
  reasoningEffort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh'
  /** Responses API only: `reasoning.summary`. */
  reasoningSummary?: 'auto' | 'concise' | 'detailed'
  /**
   * JSON Schema the final answer must follow (the session's `output_schema`): sent as the
   * provider's structured-output format, strict. Tool calls stay possible.
   */
  outputSchema?: Record<string, unknown>
  /**
   * Names the request's prompt-cache scope (the session's request segment): sent where the
   * provider routes its prompt cache by key (OpenAI `prompt_cache_key`, xAI `x-grok-conv-id`).
   */
  promptCacheKey?: string
  signal?: AbortSignal
}

export interface ModelResponse {
  text: string
  toolCalls: ToolCall[]
  /** Normalized: input_tokens is the total prompt count, including cached tokens. */
  usage: Usage
  /** The provider reported no usage (`usage` is then all zeros until the engine estimates it). */
  usageMissing?: boolean
  /** `usage` was estimated with a tokenizer, not reported by the provider. */
  usageEstimated?: boolean
  /** Provider finish/stop reason, e.g. 'stop', 'tool_calls', 'length'. */
  stopReason?: string
  /** The readable reasoning text, for the `reasoning` item. */
  reasoning?: string
  /**
   * The reasoning as the provider gave it (text, signatures, encrypted payloads), kept with the
   * assistant message in the transcript so the adapter can send it back on later requests.
   */
  reasoningBlocks?: ReasoningBlock[]
  /** The answer's message items when there were several or they carried a phase. */
  parts?: AnswerPart[]
  /**
   * The order of the answer's reasoning blocks, texts and tool calls, when it was not that
   * (`answerOrder`, src/contract/answer-blocks.ts).
   */
  order?: AnswerBlockKind[]
  /** Reasoning tokens within output_tokens, when the provider reports them. */
  reasoningTokens?: number
  /** The model that answered and the response's id, as the provider named them (telemetry). */
  responseModel?: string
  responseId?: string
}

/** Incremental view of a streaming response; `completed` is always the last event. */
export type ModelStreamEvent =
  /** `part`: which message item of the answer the text belongs to, where there can be several. */
  | { type: 'text_delta'; text: string; part?: number }
  | { type: 'reasoning_delta'; text: string }
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; argumentsDelta: string }
  | { type: 'completed'; response: ModelResponse }

/** Provider-side compaction of a transcript (OpenAI `responses.compact`). */
export interface ModelCompactionRequest {
  model: string
  messages: HistoryMessage[]
  /** The session's system prompt, sent beside the transcript. */
  instructions?: string
  signal?: AbortSignal
}

export interface ModelCompactionResult {
  /**
   * The compacted transcript as the provider returned it: normally the user messages followed by
   * one `compaction` item; a provider that answers with a summary only returns no such item.
   */
  messages: HistoryMessage[]
  usage: Usage
}

export interface ModelClient {
  /**
   * Streams one model response. Faults throw TurnlineError: 'model_not_configured',
   * 'model_error' (with details.status and details.kind: 'context_overflow' | 'rate_limit' |
   * 'server' | 'auth' | 'bad_request' | 'network'), after the adapter's own retries.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>
  /**
   * Compacts a transcript at the provider (Responses API only); absent when the provider has
   * no such endpoint. Faults throw the same TurnlineErrors as {@link ModelClient.stream}.
   */
  compact?(request: ModelCompactionRequest): Promise<ModelCompactionResult>
}
