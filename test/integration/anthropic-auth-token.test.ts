import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { createDeps } from '../../functions/deps.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type MockAnthropic, startMockAnthropic } from '../support/mock-anthropic.ts'

/**
 * ANTHROPIC_AUTH_TOKEN, the Anthropic SDK's variable for a bearer token (Claude behind a gateway
 * that takes one): a turn configured by the environment alone sends it as `Authorization: Bearer`
 * and no `x-api-key`; with ANTHROPIC_API_KEY as well it is a configuration error (which one?).
 */
let mock: MockAnthropic

beforeAll(async () => {
  mock = await startMockAnthropic()
})
afterEach(() => mock.reset())
afterAll(() => mock?.close())

async function turnHeaders(credential: Record<string, string>): Promise<Record<string, string>> {
  const env = {
    ...credential,
    ANTHROPIC_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'claude-sonnet-4-6',
    TURNLINE_STORE: 'memory',
  }
  const deps = await createDeps(env)
  const service = new SessionService(deps.service)
  const { session_id: id } = await service.createSession('local', {})
  mock.enqueue({ text: 'Hello.' })
  const turn = await service.stepTurn('local', id, { input: 'hi' })
  expect(turn.events.some((e) => e.type === 'turn.completed')).toBe(true)
  expect(mock.requests).toHaveLength(1)
  return mock.requests[0]?.headers ?? {}
}

describe('the Anthropic credential from the environment', { timeout: 30_000 }, () => {
  it('sends ANTHROPIC_AUTH_TOKEN as a bearer token, without x-api-key', async () => {
    const headers = await turnHeaders({ ANTHROPIC_AUTH_TOKEN: 'gateway-token-1' })
    expect(headers.authorization).toBe('Bearer gateway-token-1')
    expect(headers['x-api-key']).toBeUndefined()
  })

  it('refuses both at once, naming them', async () => {
    const both = { ANTHROPIC_API_KEY: 'sk-ant-key-1', ANTHROPIC_AUTH_TOKEN: 'gateway-token-1' }
    await expect(createDeps({ ...both, TURNLINE_STORE: 'memory' })).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringContaining('ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN: set one'),
    })
  })
})
