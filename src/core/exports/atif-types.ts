import type { JsonValue } from '../../contract/json-value.ts'

/** The shapes of an ATIF v1.4 trajectory (atif-trajectory.ts builds one). */

export interface AtifToolCall {
  tool_call_id: string
  function_name: string
  arguments?: JsonValue
}

export interface AtifStepMetrics {
  prompt_tokens: number
  completion_tokens: number
  cached_tokens?: number
  extra?: { cache_creation_tokens: number }
}

export interface AtifStep {
  step_id: number
  source: 'system' | 'user' | 'agent'
  message?: string
  reasoning_content?: string
  tool_calls?: AtifToolCall[]
  observation?: { results: { source_call_id: string; content: string }[] }
  metrics?: AtifStepMetrics
  extra?: Record<string, JsonValue>
}

export interface AtifTrajectory {
  schema_version: string
  session_id: string
  agent: { name: string; version: string; model_name?: string }
  steps: AtifStep[]
  final_metrics: {
    total_prompt_tokens: number
    total_completion_tokens: number
    total_cached_tokens?: number
    total_steps: number
    extra: { num_turns: number }
  }
}

export interface AtifAgent {
  name: string
  version: string
  model?: string
}
