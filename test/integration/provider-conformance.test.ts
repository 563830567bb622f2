import { afterAll, afterEach, beforeAll, describe, it } from 'vitest'
import { TOOL_SECRET } from '../support/engine-deps.ts'
import { PROVIDER_CASES } from '../support/provider-cases/index.ts'
import { runProviderCase } from '../support/provider-conformance.ts'
import { type ProviderReplay, startProviderReplay } from '../support/provider-replay.ts'
import { startToolReceiver } from '../support/tool-receiver.ts'

/**
 * Provider conformance: recorded stream shapes of each provider family, replayed over HTTP
 * through the real model adapter and the real engine; each case checks the turn's events, the
 * transcript sent back on the next request, and the usage (test/support/provider-case.ts).
 */
let replay: ProviderReplay
let receiver: Awaited<ReturnType<typeof startToolReceiver>>

beforeAll(async () => {
  replay = await startProviderReplay()
  receiver = await startToolReceiver(TOOL_SECRET)
})
afterEach(() => {
  replay.reset()
  receiver.calls.length = 0
})
afterAll(async () => {
  await replay.close()
  await receiver.close()
})

for (const [family, cases] of Object.entries(PROVIDER_CASES)) {
  describe(family, () => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, providerCase) => {
      await runProviderCase(providerCase, replay, receiver)
    })
  })
}
