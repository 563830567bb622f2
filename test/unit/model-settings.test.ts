import { describe, expect, it } from 'vitest'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import { resolveModelSettings } from '../../src/core/model/model-settings.ts'

const defaults = { model: 'deploy-model', modelApi: 'responses' as const }

describe('resolveModelSettings', () => {
  it('takes the deployment API for model settings that name no API, as for a model name', () => {
    const config = SessionConfigSchema.parse({ model: { name: 'm', temperature: 0.2, top_p: 0.5 } })
    expect(resolveModelSettings(config.model, defaults)).toEqual({
      name: 'm',
      api: 'responses',
      temperature: 0.2,
      top_p: 0.5,
    })
    expect(resolveModelSettings('m', defaults)).toEqual({ name: 'm', api: 'responses' })
    expect(resolveModelSettings({ name: 'm', api: 'chat' }, defaults)?.api).toBe('chat')
    expect(resolveModelSettings(undefined, defaults)).toEqual({
      name: 'deploy-model',
      api: 'responses',
    })
    expect(resolveModelSettings(undefined, { model: undefined, modelApi: 'chat' })).toBeUndefined()
  })

  it('refuses sampling settings out of range', () => {
    expect(SessionConfigSchema.safeParse({ model: { name: 'm', temperature: 2.5 } }).success).toBe(
      false,
    )
    expect(SessionConfigSchema.safeParse({ model: { name: 'm', top_p: -0.1 } }).success).toBe(false)
  })
})
