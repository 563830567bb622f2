import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { createApp } from '../../functions/app.ts'
import { WebhookConfigSchema } from '../../src/contract/webhook-config.ts'
import { systemClock } from '../../src/shared/system-clock.ts'
import { FakeSessionApi } from './fake-session-api.ts'

/**
 * The app with every optional route enabled (the runner callback, a webhook, tenant limits and
 * so `GET /v1/usage`), so that its OpenAPI document covers the whole API.
 */
export function fullApp() {
  return createApp({
    api: new FakeSessionApi(),
    auth: { keys: [] },
    runnerSecret: 'runner-secret-0123456789abcdef',
    tenancy: {
      limiter: new MemoryTenantLimiter(),
      defaults: { requestsPerMinute: 1000 },
      slotTtlMs: 60_000,
      reservationTtlMs: 900_000,
      defaultOutputTokens: 4096,
      clock: systemClock,
    },
    webhooks: {
      deploy: WebhookConfigSchema.parse({
        secret: `whsec_${btoa('webhook-secret-0123456789abcdef')}`,
        tenant: 'local',
        prompt: 'Deploy: {{body}}',
      }),
    },
  })
}
