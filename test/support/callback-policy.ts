import type { CallbackPolicy } from '../../src/core/callbacks/callback-policy.ts'

/**
 * A callback delivery policy for tests of the outbox: short deadlines and retries (1 s first,
 * 8 s at most, given up after a minute), one signing secret, no default URL.
 */
export function testCallbackPolicy(
  fetchImpl: typeof fetch,
  owner: string,
  secret: string,
  overrides: Partial<CallbackPolicy> = {},
): CallbackPolicy {
  return {
    fetch: fetchImpl,
    secretFor: () => secret,
    defaultUrlFor: () => undefined,
    allowHttp: false,
    timeoutMs: 1000,
    retry: { firstMs: 1000, maxMs: 8000, giveUpAfterMs: 60_000 },
    owner,
    claimMarginMs: 1000,
    markerGraceMs: 10_000,
    ...overrides,
  }
}
