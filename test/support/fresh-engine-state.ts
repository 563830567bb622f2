import { type EngineState, parseEngineState } from '../../src/contract/engine-state.ts'
import { SessionConfigSchema } from '../../src/contract/session-config.ts'
import { ZERO_USAGE } from '../../src/contract/usage.ts'

/**
 * A session's engine state with nothing done yet, as the store would give it back: `config`
 * parsed with its defaults, `fields` over the counters.
 */
export function freshEngineState(
  config: Record<string, unknown> = {},
  fields: Record<string, unknown> = {},
): EngineState {
  return parseEngineState({
    engine_version: 1,
    config: SessionConfigSchema.parse(config),
    usage: { ...ZERO_USAGE },
    model_requests: 0,
    budget_warned: false,
    pricing_warned: false,
    item_counter: 0,
    turn_counter: 0,
    recent_turns: [],
    ...fields,
  })
}
