import { createApp } from '../../functions/app.ts'
import { WebhookConfigSchema } from '../../src/contract/webhook-config.ts'
import { FakeSessionApi } from './fake-session-api.ts'

/**
 * The app with every optional route enabled (the runner callback and a webhook), so that its
 * OpenAPI document covers the whole API.
 */
export function fullApp() {
  return createApp({
    api: new FakeSessionApi(),
    auth: { keys: [] },
    runnerSecret: 'runner-secret-0123456789abcdef',
    webhooks: {
      deploy: WebhookConfigSchema.parse({
        secret: `whsec_${btoa('webhook-secret-0123456789abcdef')}`,
        tenant: 'local',
        prompt: 'Deploy: {{body}}',
      }),
    },
  })
}
