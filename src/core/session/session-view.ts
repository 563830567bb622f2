import type { SessionView } from '../../contract/api.ts'
import { type EngineState, parseEngineState } from '../../contract/engine-state.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { coordinatorId } from '../engine/with-lease.ts'
import { sessionBudget } from '../guardrails/session-budget.ts'
import { withoutSecrets } from '../mcp/mcp-servers.ts'
import { sessionPrice } from '../model/budget.ts'
import { resolveModelSettings } from '../model/model-settings.ts'
import type { ModelPrice } from '../model/pricing.ts'
import { currentActivity } from './current-activity.ts'
import { withTurnState } from './turn-state.ts'

/**
 * `GET /v1/sessions/:id`: the session folded to its last batch — summary, usage, cost, the model
 * and price in force, its settings (secrets redacted), the budget report and what it is doing
 * between calls (`activity`).
 */
export async function sessionView(deps: ServiceDeps, ref: SessionRef): Promise<SessionView> {
  const snapshot = await deps.sessions.open(ref)
  const state = parseEngineState(snapshot.state)
  const manifest = snapshot.manifest?.value
  const model = resolveModelSettings(state.config.model, deps.defaults)
  const price = model ? sessionPrice(model) : undefined
  return {
    session_id: ref.sessionId,
    thread_id: snapshot.threadId,
    workspace: ref.workspace,
    status: snapshot.status,
    created_at: snapshot.createdAt,
    updated_at: snapshot.updatedAt,
    turn_count: snapshot.turnCount,
    event_count: snapshot.nextSeq - (manifest?.rolled_head_seq ?? 0),
    last_seq: snapshot.nextSeq - 1,
    ...(snapshot.title === undefined ? {} : { title: snapshot.title }),
    num_turns: state.model_requests,
    usage: state.usage,
    ...(state.reasoning_tokens ? { reasoning_tokens: state.reasoning_tokens } : {}),
    ...(state.estimated_tokens ? { estimated_tokens: state.estimated_tokens } : {}),
    ...(state.cost_usd != null ? { total_cost_usd: state.cost_usd } : {}),
    ...(model?.name ? { model: model.name } : {}),
    ...(price ? { price: viewPrice(price) } : {}),
    config: withoutSecrets(state.config),
    budget: sessionBudget(state),
    ...(snapshot.status === 'active' ? await liveActivity(deps, ref, state) : {}),
  }
}

/** What the session does between calls, with whether anyone is running its turn (its lease). */
async function liveActivity(deps: ServiceDeps, ref: SessionRef, state: EngineState) {
  const { activity } = currentActivity(state)
  if (!activity) return {}
  const lease = await deps.coordinator.readLease(coordinatorId(ref))
  return { activity: withTurnState(activity, lease, deps.defaults.leaseMs, deps.clock.now()) }
}

/** The price a session view shows: per input, output, cached and cache-written input token. */
function viewPrice(price: ModelPrice): NonNullable<SessionView['price']> {
  return {
    input: price.input,
    output: price.output,
    ...(price.cacheRead === undefined ? {} : { cached_input: price.cacheRead }),
    ...(price.cacheWrite === undefined ? {} : { cache_write: price.cacheWrite }),
  }
}
