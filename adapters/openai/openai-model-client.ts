import type OpenAI from 'openai'
import type {
  ModelClient,
  ModelCompactionRequest,
  ModelCompactionResult,
  ModelRequest,
  ModelStreamEvent,
} from '../../src/ports/model-client.ts'
import {
  type RetryTiming,
  retryingCall,
  retryingStream,
  retryPolicy,
} from '../shared/model-retry.ts'
import { chatEndpoint } from './chat-request.ts'
import { streamChat } from './chat-stream.ts'
import { classifyModelFailure, isUserAbort } from './model-failure.ts'
import {
  type OpenAICompatibleProvider,
  providerProfile,
  recognizeProvider,
} from './provider-profile.ts'
import { compactResponses } from './responses-compact.ts'
import { streamResponses } from './responses-stream.ts'
import { modelNotConfiguredError } from './unconfigured-model-client.ts'

export type { RetryTiming } from '../shared/model-retry.ts'
export type { ModelErrorKind } from './model-failure.ts'
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
 *
 * The SDK's client (every resource of the API, ≈ 110 KB minified) is imported and made at the
 * first Responses request or compaction: Chat Completions streams never need it, and a bundle
 * that splits modules (the Worker, whose start compiles what it imports statically) keeps it
 * out of the start.
 */
export function createOpenAIModelClient(options: OpenAIModelClientOptions): ModelClient {
  if (!options.apiKey && !options.baseURL) throw modelNotConfiguredError()
  let made: Promise<OpenAI> | undefined
  const client = () =>
    (made ??= import('openai').then(
      ({ default: SdkClient }) =>
        new SdkClient({
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
        }),
    ))
  // Chat streams skip the SDK's request pipeline (see chat-request.ts); the rest goes through it.
  const chat = chatEndpoint({
    apiKey: options.apiKey || KEYLESS_PLACEHOLDER,
    baseURL: options.baseURL || DEFAULT_BASE_URL,
    fetch: options.fetch,
    timeoutMs: options.timeoutMs,
  })
  const profile = providerProfile(options.provider ?? recognizeProvider(options.baseURL))
  const policy = retryPolicy(options, classifyModelFailure, isUserAbort)

  function stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
    return retryingStream(policy, request.signal, () =>
      request.api === 'responses' ? responsesStream(request) : streamChat(chat, request, profile),
    )
  }

  async function* responsesStream(request: ModelRequest): AsyncGenerator<ModelStreamEvent> {
    yield* streamResponses(await client(), request, profile)
  }

  function compact(request: ModelCompactionRequest): Promise<ModelCompactionResult> {
    return retryingCall(policy, request.signal, async () =>
      compactResponses(await client(), request),
    )
  }

  return { stream, compact }
}
