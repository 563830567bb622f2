import type { EngineState } from '../../contract/engine-state.ts'
import type { ModelSettings } from '../../contract/model-config.ts'
import type { Usage } from '../../contract/usage.ts'
import type { ModelPrice } from './pricing.ts'
import { estimateCostUsd, priceFor } from './pricing.ts'

/** The session's price per token: its own override, else the built-in table; undefined = unknown. */
export function sessionPrice(model: ModelSettings): ModelPrice | undefined {
  const own = model.price
  if (!own) return priceFor(model.name)
  return {
    input: own.input,
    output: own.output,
    ...(own.cached_input === undefined ? {} : { cacheRead: own.cached_input }),
    ...(own.cache_write === undefined ? {} : { cacheWrite: own.cache_write }),
  }
}

/** Adds one response's cost (cached input at the cached rate) when pricing is known. */
export function addCost(state: EngineState, usage: Usage, price: ModelPrice | undefined) {
  return price ? (state.cost_usd ?? 0) + estimateCostUsd(usage, price) : (state.cost_usd ?? null)
}
