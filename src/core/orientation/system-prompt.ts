import type { EngineState } from '../../contract/engine-state.ts'

/**
 * The system prompt of every request of a segment: the session instructions, then the frozen
 * `[Orientation Context]` section (VT Code injects it into the system prompt). Both are part of
 * the prefix hash; the orientation changes only when the orient phase runs again (a session
 * start, a context reset, a plan handoff), which opens a new segment.
 */
export function systemPrompt(state: EngineState): string {
  const parts = [state.config.instructions ?? '', state.agent?.orientation?.text ?? '']
  return parts.filter((part) => part.trim() !== '').join('\n\n')
}

/** The orientation digest the request segment records, when a section is frozen. */
export function orientationDigest(state: EngineState): string | undefined {
  const orientation = state.agent?.orientation
  return orientation && orientation.text !== '' ? orientation.digest : undefined
}
