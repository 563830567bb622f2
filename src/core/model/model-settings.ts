import type { ModelSettings } from '../../contract/model-config.ts'
import type { SessionConfig } from '../../contract/session-config.ts'
import type { ModelRequest } from '../../ports/model-client.ts'
import type { ServiceDefaults } from '../engine/service-deps.ts'

/** Model settings with the name and API resolved (a session's own, else the deployment's). */
export type ResolvedModelSettings = ModelSettings

/**
 * The session's model: its own setting, else the deployment default; undefined = none. A
 * settings object without a name or API takes the deployment's.
 */
export function resolveModelSettings(
  model: SessionConfig['model'],
  defaults: Pick<ServiceDefaults, 'model' | 'modelApi'>,
): ResolvedModelSettings | undefined {
  if (typeof model === 'string') return { name: model, api: defaults.modelApi }
  const name = model?.name ?? defaults.model
  if (!name) return undefined
  return { ...model, name, api: model?.api ?? defaults.modelApi }
}

/** The sampling and reasoning settings of a model request (absent ones are not sent). */
export function requestSettings(
  settings: ModelSettings,
): Pick<
  ModelRequest,
  'maxOutputTokens' | 'temperature' | 'topP' | 'reasoningEffort' | 'reasoningSummary'
> {
  return {
    ...(settings.max_output_tokens ? { maxOutputTokens: settings.max_output_tokens } : {}),
    ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
    ...(settings.top_p !== undefined ? { topP: settings.top_p } : {}),
    ...(settings.reasoning_effort ? { reasoningEffort: settings.reasoning_effort } : {}),
    ...(settings.reasoning_summary ? { reasoningSummary: settings.reasoning_summary } : {}),
  }
}
