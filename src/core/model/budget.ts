import type { EngineState } from '../../contract/engine-state.ts'
import type { ModelSettings } from '../../contract/session-config.ts'
import type { Usage } from '../../contract/usage.ts'
import type { ModelPrice } from './pricing.ts'
import { estimateCostUsd, priceFor } from './pricing.ts'

/** The session's price per token: its own override, else the built-in table; undefined = unknown. */
export function sessionPrice(model: ModelSettings): ModelPrice | undefined {
  return model.price ?? priceFor(model.name)
}

/** Adds one response's raw cost (VT Code raw_usd: no cache discount) when pricing is known. */
export function addCost(state: EngineState, usage: Usage, price: ModelPrice | undefined) {
  return price ? (state.cost_usd ?? 0) + estimateCostUsd(usage, price) : (state.cost_usd ?? null)
}
