import { isTurnlineError } from '../../contract/errors.ts'
import type { Usage } from '../../contract/usage.ts'
import type { ModelCallHold } from '../../ports/admission.ts'
import type { ModelClient, ModelRequest, ModelStreamEvent } from '../../ports/model-client.ts'
import { toMicroUsd } from '../../shared/micro-usd.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import { SessionImages } from '../../store/session-images.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { serviceLog } from '../engine/service-log.ts'
import { estimateCostUsd, type ModelPrice } from './pricing.ts'
import { withEstimatedUsage } from './usage-estimate.ts'

/** Who pays for a model call: the tenant, the session it is made for, and its price. */
export interface ModelCallOwner {
  deps: ServiceDeps
  tenant: string
  sessionId: string
  /** The session's workspace: where its stored images are loaded from. */
  workspace: string
  /** Per token; undefined when unknown (no cost is reserved or charged, as for the budget). */
  price: ModelPrice | undefined
  /**
   * Where a streamed call's settlement is left running instead of awaited before the stream
   * ends: the turn goes on to its commit meanwhile and awaits them all before it answers
   * (settlements never reject). Without it each call awaits its own.
   */
  settlements?: Promise<void>[]
}

/**
 * Bytes of a request's JSON per reserved input token: one token per 3 bytes is above what the
 * providers' tokenizers count for prose and code, so a reservation rarely falls short of the
 * call it holds for; the settlement replaces it by the provider's own count.
 */
const BYTES_PER_TOKEN = 3

/**
 * The model client of one call, named `step` within its session (`turn-3/request-7`,
 * `compaction-2/local`, `fork-<token>`): every model call of the engine is made through here
 * (test/unit/architecture.test.ts checks that nothing else asks `deps.models`). Before the
 * request is sent its estimate — the request's input tokens (its JSON bytes / 3) plus its
 * `max_output_tokens`, else the deployment's default output reservation; worked out only when the
 * tenant has a daily token or cost quota to hold it against — is held with the deployment's admission, which refuses with 429 `quota_exceeded` without the model being called;
 * once the provider answered, its usage is settled in place of the estimate (once per call id,
 * `<session>/<step>#<random>`: one per call sent, so a step sent again is counted again, as the
 * provider bills it again); a call that failed without an answer releases its hold, and one stopped
 * after it was sent (its signal aborted: the platform's deadline, a cancellation) is charged its
 * estimate, for the provider may bill what it was sent and what it streamed.
 */
export function admittedModel(owner: ModelCallOwner, step: string): ModelClient {
  const client = owner.deps.models(owner.tenant)
  // One id per call sent: a step sent again (a compaction stopped and asked again, a request
  // retried after a crash before its commit) is billed again, so it is settled again.
  const callId = () => `${owner.sessionId}/${step}#${owner.deps.ids.token().slice(0, 12)}`
  const { sessions } = owner.deps
  const { tenant, workspace, sessionId } = owner
  // Stored images go out as the provider takes them: loaded back from the session's folder.
  const images = new SessionImages(
    sessions.objects,
    sessions.keys({ tenant, workspace, sessionId }).root,
  )
  const model: ModelClient = {
    stream: (request) => admittedStream(owner, callId(), client, request, images),
  }
  const compact = client.compact?.bind(client)
  if (compact) {
    model.compact = async (request) => {
      const estimate = callEstimate(owner, [request.instructions, request.messages], undefined)
      const hold = await reserve(owner, callId(), estimate)
      let usage: Usage | undefined
      try {
        const messages = await images.loadMessages(request.messages)
        const result = await compact({ ...request, messages })
        usage = result.usage
        return result
      } catch (error) {
        logModelFailure(owner, error)
        throw error
      } finally {
        await finish(owner, hold, usage)
      }
    }
  }
  return model
}

async function* admittedStream(
  owner: ModelCallOwner,
  id: string,
  client: ModelClient,
  request: ModelRequest,
  images: SessionImages,
): AsyncIterable<ModelStreamEvent> {
  const { messages, tools, outputSchema, signal } = request
  const estimate = callEstimate(owner, [messages, tools, outputSchema], request.maxOutputTokens)
  const hold = await reserve(owner, id, estimate)
  // Stopped once sent (the platform's deadline, a cancellation), the call has no usage, yet the
  // provider may bill what it was sent and what it streamed: its estimate is charged.
  const sentBeforeStop = signal?.aborted === false
  let usage: Usage | undefined
  try {
    const sent = { ...request, messages: await images.loadMessages(messages) }
    for await (const event of client.stream(sent)) {
      if (event.type !== 'completed') {
        yield event
        continue
      }
      // Usage the provider did not report is estimated here, before it is settled.
      const response = await withEstimatedUsage(request, event.response, owner.deps.tokenizer)
      usage = response.usage
      yield { type: 'completed', response }
    }
  } catch (error) {
    logModelFailure(owner, error)
    throw error
  } finally {
    const stopped = !usage && sentBeforeStop && aborted(signal)
    const finished = stopped && hold ? hold.settle(estimate()) : finish(owner, hold, usage)
    if (owner.settlements) owner.settlements.push(finished)
    else await finished
  }
}

/**
 * A model call the adapter gave up on, for the operator: tenants read the failure without the
 * provider's words when they may name the deployment's credentials (`modelError`), so the
 * redacted words are logged here, once per failed call.
 */
function logModelFailure(owner: ModelCallOwner, error: unknown): void {
  if (!isTurnlineError(error, 'model_error')) return
  serviceLog(owner.deps)({
    level: 'warn',
    msg: 'model request failed',
    tenant: owner.tenant,
    session: owner.sessionId,
    ...error.details,
    provider_message: error.logDetails?.provider_message,
  })
}

/** What a call is held for (and charged, when it is stopped under way), worked out when asked. */
function callEstimate(
  owner: ModelCallOwner,
  sent: unknown,
  maxOutputTokens: number | undefined,
): () => { tokens: number; costMicroUsd: number } {
  return () => {
    const input = Math.ceil(utf8Length(JSON.stringify(sent) ?? '') / BYTES_PER_TOKEN)
    const output = maxOutputTokens ?? owner.deps.admission?.defaultOutputTokens ?? 0
    return { tokens: input + output, costMicroUsd: costOf(owner.price, input, output) }
  }
}

async function reserve(
  owner: ModelCallOwner,
  id: string,
  estimate: () => { tokens: number; costMicroUsd: number },
): Promise<ModelCallHold | undefined> {
  const admission = owner.deps.admission
  if (!admission) return undefined
  return admission.reserve(owner.tenant, { id, estimate })
}

async function finish(
  owner: ModelCallOwner,
  hold: ModelCallHold | undefined,
  usage: Usage | undefined,
): Promise<void> {
  if (!hold) return
  if (!usage) return hold.release()
  await hold.settle({
    tokens: usage.input_tokens + usage.output_tokens,
    costMicroUsd: owner.price ? toMicroUsd(estimateCostUsd(usage, owner.price)) : 0,
  })
}

function costOf(price: ModelPrice | undefined, input: number, output: number): number {
  if (!price) return 0
  const usage = { input_tokens: input, cached_input_tokens: 0, cache_creation_tokens: 0 }
  return toMicroUsd(estimateCostUsd({ ...usage, output_tokens: output }, price))
}

/** Read anew each time (not narrowed by an earlier look): a signal aborts while a call runs. */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}
