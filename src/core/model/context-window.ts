import type { ModelSettings } from '../../contract/model-config.ts'

/**
 * The provider's context capacity of a model, in tokens: the session's `context_window` setting,
 * else this table of OpenAI families (a provider prefix such as `openai/` is ignored), else
 * undefined — and then only `harness.max_context_tokens` bounds the thresholds.
 */
const FAMILIES: readonly (readonly [RegExp, number])[] = [
  [/^gpt-5(?:[.-]|$)/, 400_000],
  [/^gpt-4\.1(?:-|$)/, 1_047_576],
  [/^gpt-4o(?:-|$)/, 128_000],
  [/^gpt-4-turbo(?:-|$)/, 128_000],
  [/^gpt-4-(?:0125|1106)-preview$/, 128_000],
  [/^gpt-4(?:-0613)?$/, 8_192],
  [/^gpt-3\.5-turbo(?:-|$)/, 16_385],
  [/^o1-(?:mini|preview)(?:-|$)/, 128_000],
  [/^o(?:1|3|4-mini)(?:-|$)/, 200_000],
]

export function contextWindowOf(settings: ModelSettings): number | undefined {
  if (settings.context_window !== undefined) return settings.context_window
  const name = (settings.name.split('/').pop() ?? settings.name).trim().toLowerCase()
  return FAMILIES.find(([pattern]) => pattern.test(name))?.[1]
}
