import { afterAll, beforeAll, beforeEach } from 'vitest'
import { appInstances } from './app-instance.ts'
import type { MockOpenAI } from './mock-openai.ts'
import { startTestBackends, type TestBackends } from './test-deployment.ts'

/**
 * A deployment on S3 + Upstash (`startTestBackends`) with one webhook, `triage` of tenant `acme`,
 * and an API key of `acme`, for a test file: its backends start before the file's tests and stop
 * after them, with every instance it started; the mock model is reset before each test. `extra`
 * variables go into every instance's environment.
 */
export function webhookDeployment(label: string, extra: Record<string, string> = {}) {
  const secret = `whsec_${Buffer.from(`${label}-webhook-secret-0123456789`).toString('base64')}`
  const apiKey = `api-key-${label}-0123456789`
  let backends: TestBackends | undefined
  const running = () => {
    if (!backends) throw new Error('the backends are not started (beforeAll)')
    return backends
  }
  const apps = appInstances(() =>
    running().env({
      TURNLINE_API_KEYS: `${apiKey}=acme`,
      TURNLINE_WEBHOOKS: JSON.stringify({ triage: { secret, tenant: 'acme' } }),
      ...extra,
    }),
  )
  beforeAll(async () => {
    backends = await startTestBackends(label)
  })
  afterAll(async () => {
    await apps.close()
    await backends?.close()
  })
  beforeEach(() => backends?.mock.reset())
  return {
    secret,
    apiKey,
    apps,
    get mock(): MockOpenAI {
      return running().mock
    },
  }
}
