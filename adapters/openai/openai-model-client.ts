import OpenAI from 'openai'
import { abortableSleep } from '../../src/contract/abortable-sleep.ts'
import type {
  ModelClient,
  ModelCompactionRequest,
  ModelCompactionResult,
  ModelRequest,
  ModelStreamEvent,
} from '../../src/ports/model-client.ts'
import { chatEndpoint } from './chat-request.ts'
import { streamChat } from './chat-stream.ts'
import { classifyModelFailure, isUserAbort, modelError } from './model-failure.ts'
import {
  type OpenAICompatibleProvider,
  providerProfile,
  recognizeProvider,
} from './provider-profile.ts'
import { compactResponses } from './responses-compact.ts'
import { streamResponses } from './responses-stream.ts'
import { backoffDelayMs, DEFAULT_RETRY_TIMING, type RetryTiming } from './retry-backoff.ts'
import { modelNotConfiguredError } from './unconfigured-model-client.ts'

export type { ModelErrorKind } from './model-failure.ts'
export type { RetryTiming } from './retry-backoff.ts'
export { modelNotConfiguredError, unconfiguredModelClient } from './unconfigured-model-client.ts'

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface OpenAIModelClientOptions {
  /** Bearer key. Optional for keyless OpenAI-compatible servers (Ollama, vLLM) given a baseURL. */
  apiKey?: string
  /** e.g. `http://127.0.0.1:11434/v1`; default `https://api.openai.com/v1`. */
  baseURL?: string
  /** Retries after the first attempt, on 429, 5xx and network faults only. Default 2. */
  maxRetries?: number
  fetch?: FetchLike
  /** Per-attempt timeout until response headers arrive. Default 10 minutes. */
  timeoutMs?: number
  retry?: RetryTiming
  /**
   * Which OpenAI-compatible provider the endpoint is (its request and stream differences, see
   * provider-profile.ts); absent → recognized from `baseURL`.
   */
  provider?: OpenAICompatibleProvider
}

const DEFAULT_BASE_URL = 'https://api.openai.com/v1'
const KEYLESS_PLACEHOLDER = 'unused'

/**
 * ModelClient over the `openai` SDK for the Chat Completions and Responses APIs, with the
 * Responses API's `responses.compact` as the provider compaction. The adapter
 * runs its own retry loop (the SDK's is switched off): it retries only 429, 5xx and transport
 * faults, bounds server-requested waits, aborts its backoff with the request signal, and never
 * retries once an event has reached the caller.
 */
export function createOpenAIModelClient(options: OpenAIModelClientOptions): ModelClient {
  if (!options.apiKey && !options.baseURL) throw modelNotConfiguredError()
  const client = new OpenAI({
    // Everything explicit, so the SDK never consults process.env / Deno.env.
    apiKey: options.apiKey || KEYLESS_PLACEHOLDER,
    baseURL: options.baseURL || DEFAULT_BASE_URL,
    organization: null,
    project: null,
    webhookSecret: null,
    logLevel: 'off',
    maxRetries: 0,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })
  // Chat streams skip the SDK's request pipeline (see chat-request.ts); the rest goes through it.
  const chat = chatEndpoint({
    apiKey: options.apiKey || KEYLESS_PLACEHOLDER,
    baseURL: options.baseURL || DEFAULT_BASE_URL,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
  })
  const profile = providerProfile(options.provider ?? recognizeProvider(options.baseURL))
  const maxRetries = Math.max(0, options.maxRetries ?? 2)
  const timing = { ...DEFAULT_RETRY_TIMING, ...options.retry }

  /** After a failed attempt: the error to throw, or undefined once the backoff has passed. */
  async function retryOrThrow(
    error: unknown,
    attempt: number,
    delivered: boolean,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    if (isUserAbort(error, signal)) {
      signal?.throwIfAborted()
      throw error
    }
    const failure = classifyModelFailure(error)
    const waitTooLong =
      failure.retryAfterMs !== undefined && failure.retryAfterMs > timing.maxRetryAfterMs
    if (delivered || !failure.retryable || waitTooLong || attempt >= maxRetries) {
      throw modelError(failure, attempt + 1)
    }
    await abortableSleep(failure.retryAfterMs ?? backoffDelayMs(attempt, timing), signal)
  }

  async function* stream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    const { signal } = request
    for (let attempt = 0; ; attempt++) {
      let delivered = false
      try {
        signal?.throwIfAborted()
        const events =
          request.api === 'responses'
            ? streamResponses(client, request)
            : streamChat(chat, request, profile)
        for await (const event of events) {
          delivered = true
          yield event
        }
        return
      } catch (error) {
        await retryOrThrow(error, attempt, delivered, signal)
      }
    }
  }

  async function compact(request: ModelCompactionRequest): Promise<ModelCompactionResult> {
    const { signal } = request
    for (let attempt = 0; ; attempt++) {
      try {
        signal?.throwIfAborted()
        return await compactResponses(client, request)
      } catch (error) {
        await retryOrThrow(error, attempt, false, signal)
      }
    }
  }

  return { stream, compact }
}
