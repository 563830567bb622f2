import { afterEach } from 'vitest'
import { assertMocksDone } from './open-mocks.ts'

// Every test of every tier: a mock OpenAI server still open must have answered all its scripted
// steps and no unexpected request (its own `assertDone`, no longer left to each file).
afterEach(() => {
  assertMocksDone()
})
