import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { splitTurnInput, type TurnInput } from '../../contract/turn-input.ts'
import type { ResolvedModelSettings } from './model-settings.ts'

/**
 * Models known to take no image input (text-only families), by name without a provider prefix.
 * A model not named here is sent its images; a provider that refuses them fails the turn with
 * its own message.
 */
const TEXT_ONLY: readonly RegExp[] = [
  /^gpt-3\.5/,
  /^o1-mini/,
  /^o3-mini/,
  /^gpt-oss/,
  /^deepseek-/,
  /^kimi-k2/,
  /^codestral/,
  /^devstral/,
  /^magistral/,
  /^qwq/,
  /^qwen3-(coder|max)/,
]

/** Why a session on `settings` cannot be sent images, or undefined when it can. */
export function imageRefusal(settings: ResolvedModelSettings | undefined): string | undefined {
  if (!settings) return undefined
  const bare = settings.name.toLowerCase().replace(/^.*\//, '')
  return TEXT_ONLY.some((pattern) => pattern.test(bare))
    ? `model ${settings.name} takes no image input`
    : undefined
}

/**
 * The user message of a turn's input: its text, and its images when it has any. Images for a
 * model known not to take them are refused (a 400 before the turn opens), never dropped.
 */
export function userMessageOf(
  input: TurnInput,
  settings: ResolvedModelSettings | undefined,
): HistoryMessage {
  const { text, images } = splitTurnInput(input)
  if (images.length === 0) return { role: 'user', content: text }
  const refusal = imageRefusal(settings)
  if (refusal) {
    throw new TurnlineError(
      'invalid_input',
      `${refusal}: send the turn without input_image parts`,
      {
        details: { field: 'input' },
      },
    )
  }
  return { role: 'user', content: text, images }
}
