import type { ModelSettings, SessionConfig } from '../../contract/session-config.ts'
import type { ServiceDefaults } from '../engine/service-deps.ts'

/** The session's model: its own setting, else the deployment default; undefined = none. */
export function resolveModelSettings(
  model: SessionConfig['model'],
  defaults: Pick<ServiceDefaults, 'model' | 'modelApi'>,
): ModelSettings | undefined {
  if (typeof model === 'string') return { name: model, api: defaults.modelApi }
  if (model) return model
  return defaults.model ? { name: defaults.model, api: defaults.modelApi } : undefined
}
