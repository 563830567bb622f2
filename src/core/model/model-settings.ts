import type { ModelSettings, SessionConfig } from '../../contract/session-config.ts'
import type { ServiceDefaults } from '../engine/service-deps.ts'

/** Model settings with the API resolved (a session's own, else the deployment's). */
export type ResolvedModelSettings = ModelSettings & { api: NonNullable<ModelSettings['api']> }

/** The session's model: its own setting, else the deployment default; undefined = none. */
export function resolveModelSettings(
  model: SessionConfig['model'],
  defaults: Pick<ServiceDefaults, 'model' | 'modelApi'>,
): ResolvedModelSettings | undefined {
  if (typeof model === 'string') return { name: model, api: defaults.modelApi }
  if (model) return { ...model, api: model.api ?? defaults.modelApi }
  return defaults.model ? { name: defaults.model, api: defaults.modelApi } : undefined
}
