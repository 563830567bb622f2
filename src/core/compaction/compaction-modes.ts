import type { CompactionMode } from '../../contract/enums.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { MemoryEnvelope } from '../../contract/memory-envelope.ts'
import { addUsage, type Usage } from '../../contract/usage.ts'
import type { ModelClient, ModelRequest, ModelResponse } from '../../ports/model-client.ts'
import { admittedModel } from '../model/admitted-model.ts'
import { addCost, sessionPrice } from '../model/budget.ts'
import { requestSettings } from '../model/model-settings.ts'
import type { CompactionRequest, CompactionRun } from './compaction-run.ts'
import {
  completeLocalCompaction,
  envelopePlacementFor,
  type LocalCompactionPlan,
} from './local-compaction.ts'
import { completeProviderCompaction, withEnvelope } from './provider-compaction.ts'

/**
 * The model call of one compaction, in the mode that applies: `provider` (the Responses API's
 * `responses.compact`) for a session on `api: "responses"` whose client offers it and whose
 * `harness.provider_compaction` is on, unless manual instructions ask for a summary of their own;
 * `local` (one summary call without tools) otherwise, and once after a failed provider call.
 * Either call's usage and cost count toward the session (and the open turn); each is reserved
 * and settled with the tenant's quotas as `compaction-<n>/<mode>` (the session's n-th compaction).
 */

export interface CompactionProduct {
  mode: CompactionMode
  /** Recorded in the memory envelope. */
  summary: string
  /** The compacted history (before any kept messages) with the envelope inserted. */
  complete(envelope: MemoryEnvelope): HistoryMessage[]
}

export type ProductOutcome =
  | { kind: 'produced'; product: CompactionProduct }
  | { kind: 'failed'; error: TurnlineError }

type Compact = NonNullable<ModelClient['compact']>

export function providerCompactor(
  run: CompactionRun,
  request: CompactionRequest,
): Compact | undefined {
  if (run.settings.api !== 'responses') return undefined
  if (!run.state.config.harness.provider_compaction) return undefined
  if (request.instructions?.trim()) return undefined
  const client = modelFor(run, 'provider')
  return client.compact ? (input) => (client.compact as Compact).call(client, input) : undefined
}

/** The client of this compaction's call in `mode`. */
function modelFor(run: CompactionRun, mode: CompactionMode) {
  const owner = {
    deps: run.deps,
    tenant: run.ref.tenant,
    sessionId: run.ref.sessionId,
    workspace: run.ref.workspace,
    price: sessionPrice(run.settings),
  }
  const number = (run.state.compaction?.compactions ?? 0) + 1
  return admittedModel(owner, `compaction-${number}/${mode}`)
}

export async function produceCompaction(
  run: CompactionRun,
  request: CompactionRequest,
  plan: LocalCompactionPlan,
): Promise<ProductOutcome> {
  const placement = envelopePlacementFor(request.trigger)
  const compact = providerCompactor(run, request)
  if (compact) {
    try {
      const instructions = run.state.config.instructions
      const result = await compact({
        model: run.settings.name,
        messages: plan.source,
        ...(instructions ? { instructions } : {}),
        ...(run.signal ? { signal: run.signal } : {}),
      })
      charge(run, result.usage)
      await run.heartbeat?.()
      const done = completeProviderCompaction(result.messages, plan.source, plan.selection.tail)
      if (done.summaryOnly) {
        run.warnings.push('provider compaction returned a summary only: the recent tail was kept')
      }
      const product: CompactionProduct = {
        mode: 'provider',
        summary: done.summary,
        complete: (envelope) => withEnvelope(done.base, envelope, placement),
      }
      return { kind: 'produced', product }
    } catch (error) {
      if (!isTurnlineError(error, 'model_error', 'model_not_configured')) throw error
      run.warnings.push(`provider compaction failed, compacted locally: ${error.message}`)
    }
  }
  let summary: ModelResponse
  try {
    summary = await summarize(run, plan.request)
  } catch (error) {
    if (isTurnlineError(error, 'model_error', 'model_not_configured')) {
      return { kind: 'failed', error }
    }
    throw error
  }
  const product: CompactionProduct = {
    mode: 'local',
    summary: summary.text.trim() || '(no summary text was returned)',
    complete: (envelope) =>
      completeLocalCompaction(plan, summary.text, envelope, placement).messages,
  }
  return { kind: 'produced', product }
}

/** The one summary call: no tools. */
async function summarize(run: CompactionRun, messages: HistoryMessage[]): Promise<ModelResponse> {
  const { settings } = run
  const request: ModelRequest = {
    model: settings.name,
    api: settings.api,
    messages,
    tools: [],
    ...requestSettings(settings),
    ...(run.signal ? { signal: run.signal } : {}),
  }
  let response: ModelResponse | undefined
  for await (const event of modelFor(run, 'local').stream(request)) {
    if (event.type === 'completed') response = event.response
    await run.heartbeat?.()
  }
  if (!response) {
    throw new TurnlineError('model_error', 'the summary call ended without a response', {
      details: { kind: 'server' },
    })
  }
  charge(run, response.usage)
  return response
}

/** Usage and cost of a compaction call: the session's and the open turn's. */
function charge(run: CompactionRun, usage: Usage): void {
  const { state, settings } = run
  state.usage = addUsage(state.usage, usage)
  if (run.open) run.open.usage = addUsage(run.open.usage, usage)
  state.cost_usd = addCost(state, usage, sessionPrice(settings))
}
