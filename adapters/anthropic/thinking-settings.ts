import type { OutputConfig, ThinkingConfigParam } from '@anthropic-ai/sdk/resources/messages'
import type { ModelRequest } from '../../src/ports/model-client.ts'

/**
 * A session's reasoning settings as the Messages API takes them (docs/models.md#anthropic).
 *
 * `reasoning_effort` turns extended thinking on. Claude models before the 4.6 generation take a
 * token budget (`thinking: {type: "enabled", budget_tokens}`): the effort picks it from
 * {@link BUDGET_TOKENS}. Later models think adaptively (`thinking: {type: "adaptive"}`) at an
 * `output_config.effort` — the only form the newest accept — so every model not recognized as
 * an older one gets that. `none` is `thinking: {type: "disabled"}`; absent, nothing is sent (the
 * model's default). `reasoning_summary` (any value) asks for summarized thinking
 * (`display: "summarized"`), which the newest models otherwise omit.
 *
 * `max_tokens` is required by the API: the session's `max_output_tokens`, else
 * {@link defaultMaxTokens}. A thinking budget must stay below it, so it is cut to fit.
 */
export interface ThinkingSettings {
  max_tokens: number
  thinking?: ThinkingConfigParam
  output_config?: OutputConfig
}

type Effort = NonNullable<ModelRequest['reasoningEffort']>

/** budget_tokens per effort (the API's minimum budget is 1,024). */
export const BUDGET_TOKENS: Readonly<Record<Exclude<Effort, 'none'>, number>> = {
  minimal: 1_024,
  low: 4_096,
  medium: 10_240,
  high: 24_576,
  xhigh: 31_744,
}

const MIN_BUDGET = 1_024

/** Effort levels of `output_config.effort` (low, medium, high, xhigh, max). */
const ADAPTIVE_EFFORT: Readonly<
  Record<Exclude<Effort, 'none'>, 'low' | 'medium' | 'high' | 'xhigh'>
> = {
  minimal: 'low',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'xhigh',
}

/**
 * Whether a model takes a thinking budget rather than adaptive thinking: the Claude 3 models
 * (3.7 Sonnet thinks; the older ones refuse any `thinking`) and the Claude 4, 4.1 and 4.5 models,
 * by Anthropic id, Bedrock id (`anthropic.claude-…-v1:0`) or Vertex id (`claude-…@date`) alike.
 */
export function takesThinkingBudget(model: string): boolean {
  const id = model.toLowerCase()
  const four = /claude-(?:opus|sonnet|haiku)-4(?:[-.](\d+))?/.exec(id)
  if (four) {
    const minor = four[1]
    // No minor version, or a snapshot date right after the 4 (claude-sonnet-4-20250514).
    return minor === undefined || minor.length >= 8 || Number(minor) < 6
  }
  return /claude-3/.test(id)
}

/** Claude 3 and 3.5 models write at most 4,096 (8,192) tokens; later ones 32,000 or more. */
export function defaultMaxTokens(model: string): number {
  const id = model.toLowerCase()
  return /claude-3-(?!7)|claude-3\.5|claude-instant/.test(id) ? 4_096 : 32_000
}

export function thinkingSettings(request: ModelRequest): ThinkingSettings {
  const maxTokens = request.maxOutputTokens ?? defaultMaxTokens(request.model)
  const effort = request.reasoningEffort
  if (effort === undefined) return { max_tokens: maxTokens }
  if (effort === 'none') return { max_tokens: maxTokens, thinking: { type: 'disabled' } }
  const display = request.reasoningSummary ? { display: 'summarized' as const } : {}
  if (takesThinkingBudget(request.model)) {
    const budget = Math.max(MIN_BUDGET, Math.min(BUDGET_TOKENS[effort], maxTokens - 1))
    return {
      max_tokens: maxTokens,
      thinking: { type: 'enabled', budget_tokens: budget, ...display },
    }
  }
  return {
    max_tokens: maxTokens,
    thinking: { type: 'adaptive', ...display },
    output_config: { effort: ADAPTIVE_EFFORT[effort] },
  }
}
