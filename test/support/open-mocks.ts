/** What `assertMocksDone` checks of a scripted mock (the mock OpenAI server). */
export interface ScriptedMock {
  assertDone(): void
}

/** The mock servers started and not closed yet, in this test file's module graph. */
export const openMocks = new Set<ScriptedMock>()

/** Every open mock must have been asked for all its steps and nothing else. */
export function assertMocksDone(): void {
  for (const mock of openMocks) mock.assertDone()
}
