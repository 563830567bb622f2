import { TurnlineError } from '../../src/contract/errors.ts'
import type { ToolCall } from '../../src/contract/history-message.ts'
import type { Usage } from '../../src/contract/usage.ts'
import type {
  ModelClient,
  ModelRequest,
  ModelResponse,
  ModelStreamEvent,
} from '../../src/ports/model-client.ts'

/** A model fault as the adapters report it (`model_error` with details.kind and status). */
export interface ScriptedFailure {
  kind: 'context_overflow' | 'rate_limit' | 'server' | 'auth' | 'bad_request' | 'network'
  status?: number
  code?: string
  message?: string
}

/** One scripted model response; without `fail` it is a success. */
export interface ScriptedStep {
  text?: string
  reasoning?: string
  /** Tool calls; an id left out becomes `call_scripted_<n>_<i>`. */
  toolCalls?: (Omit<ToolCall, 'id'> & { id?: string })[]
  /** Omitted: estimated from lengths (4 characters a token), as the HTTP mock does. */
  usage?: Partial<Usage>
  /** The provider's finish reason; default 'tool_calls' with calls, else 'stop'. */
  finishReason?: string
  reasoningTokens?: number
  /** The request fails with this fault instead (before any delta, unless `failAfterDeltas`). */
  fail?: ScriptedFailure
  /** Deltas streamed before `fail` is thrown (a provider error inside the stream). */
  failAfterDeltas?: number
  /** Characters per streamed text/argument delta. Default 4. */
  chunkSize?: number
  /**
   * The stream waits for this after its first delta (an item has started) before it goes on:
   * the test decides when the response continues (a cancel, an intent, a rival in between).
   */
  hold?: Promise<unknown>
}

export type ScriptedResponder = (request: ModelRequest) => ScriptedStep

/**
 * An in-process `ModelClient` that answers from a script, for the unit tier's engine tests: it
 * records every request (a copy of what the engine sent, before any provider mapping), streams each
 * step as the adapters do (deltas, then `completed`), and fails the test on a request the script
 * did not expect (the stream throws a plain Error, a fault the engine does not handle) and, in
 * `assertDone`, on steps never requested.
 */
export class ScriptedModelClient implements ModelClient {
  readonly requests: ModelRequest[] = []
  private readonly queue: ScriptedStep[] = []
  private readonly failures: string[] = []
  private responder: ScriptedResponder | undefined
  private counter = 0
  private readonly waiters: { count: number; resolve: () => void }[] = []

  enqueue(...steps: ScriptedStep[]): void {
    this.queue.push(...steps)
  }

  /** Computes replies once the queue is empty (unlimited requests); undefined switches it off. */
  respond(responder: ScriptedResponder | undefined): void {
    this.responder = responder
  }

  /** Resolves once `count` requests in all have arrived (a promise the stream resolves). */
  requested(count: number): Promise<void> {
    if (this.requests.length >= count) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ count, resolve }))
  }

  /** Throws when a request was unexpected or scripted steps are left over. */
  assertDone(): void {
    const problems = [...this.failures]
    if (this.queue.length > 0)
      problems.push(`${this.queue.length} scripted step(s) never requested`)
    if (problems.length > 0) throw new Error(`scripted model: ${problems.join('; ')}`)
  }

  /** Forgets the script, the responder, the recorded requests and failures (between tests). */
  reset(): void {
    this.queue.length = 0
    this.requests.length = 0
    this.failures.length = 0
    this.responder = undefined
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    // As sent: the engine goes on extending the transcript array after the request.
    this.requests.push({ ...request, messages: structuredClone(request.messages) })
    const n = this.requests.length
    for (const waiter of this.waiters.filter((w) => w.count <= n)) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
    const step = this.queue.shift() ?? this.responder?.(request)
    if (!step) {
      const message = `scripted model: unexpected request #${n} (the script is exhausted)`
      this.failures.push(message)
      throw new Error(message)
    }
    this.counter += 1
    if (step.fail && !step.failAfterDeltas) throw failure(step.fail)
    const response = this.response(step, request)
    let deltas = 0
    for (const event of deltasOf(response, step.chunkSize ?? 4)) {
      if (step.fail && deltas === step.failAfterDeltas) throw failure(step.fail)
      yield event
      deltas += 1
      if (deltas === 1 && step.hold) await step.hold
    }
    if (step.fail) throw failure(step.fail)
    if (deltas === 0 && step.hold) await step.hold
    yield { type: 'completed', response }
  }

  private response(step: ScriptedStep, request: ModelRequest): ModelResponse {
    const toolCalls = (step.toolCalls ?? []).map((call, i) => ({
      ...call,
      id: call.id ?? `call_scripted_${this.counter}_${i}`,
    }))
    const text = step.text ?? ''
    const said = text + (step.reasoning ?? '') + toolCalls.map((t) => t.name + t.arguments).join('')
    const usage: Usage = {
      input_tokens: estimateTokens(JSON.stringify(request.messages)),
      cached_input_tokens: 0,
      cache_creation_tokens: 0,
      output_tokens: estimateTokens(said),
      ...step.usage,
    }
    return {
      text,
      toolCalls,
      usage,
      stopReason: step.finishReason ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
      ...(step.reasoning ? { reasoning: step.reasoning } : {}),
      ...(step.reasoningTokens !== undefined ? { reasoningTokens: step.reasoningTokens } : {}),
    }
  }
}

const estimateTokens = (text: string) => Math.ceil(text.length / 4)

function* deltasOf(response: ModelResponse, size: number): Generator<ModelStreamEvent> {
  const chunks = (text: string) => {
    const parts: string[] = []
    for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size))
    return parts
  }
  for (const text of chunks(response.reasoning ?? '')) yield { type: 'reasoning_delta', text }
  for (const text of chunks(response.text)) yield { type: 'text_delta', text }
  for (const [index, call] of response.toolCalls.entries()) {
    yield { type: 'tool_call_delta', index, id: call.id, name: call.name, argumentsDelta: '' }
    for (const argumentsDelta of chunks(call.arguments)) {
      yield { type: 'tool_call_delta', index, argumentsDelta }
    }
  }
}

function failure(fault: ScriptedFailure): TurnlineError {
  const status = fault.status === undefined ? '' : ` (HTTP ${fault.status})`
  const message = fault.message ?? `scripted ${fault.kind} fault`
  return new TurnlineError(
    'model_error',
    `Model request failed: ${fault.kind}${status}: ${message}`,
    {
      details: {
        status: fault.status ?? null,
        kind: fault.kind,
        ...(fault.code === undefined ? {} : { code: fault.code }),
        attempts: 1,
      },
      retryable: fault.kind === 'rate_limit' || fault.kind === 'server' || fault.kind === 'network',
    },
  )
}
