import { BaseAnthropic } from '@anthropic-ai/sdk/client'
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages'
import { TurnlineError } from '../../src/contract/errors.ts'
import type { ModelClient, ModelRequest, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { type RetryTiming, retryingStream, retryPolicy } from '../shared/model-retry.ts'
import { classifyAnthropicFailure, isAnthropicUserAbort } from './anthropic-failure.ts'
import { type MessagesEndpoint, streamMessages } from './messages-stream.ts'

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface AnthropicModelClientOptions {
  /**
   * The API key (ANTHROPIC_API_KEY; the SDK sends it as `Authorization: Bearer`). Required unless
   * `authToken` is given or `messages` is (Bedrock, Vertex).
   */
  apiKey?: string
  /** A bearer token instead of a key (ANTHROPIC_AUTH_TOKEN: a gateway's), in the same header. */
  authToken?: string
  /** Default `https://api.anthropic.com` (the SDK appends `/v1/messages`). */
  baseURL?: string
  fetch?: FetchLike
  /** Per-attempt timeout until response headers arrive. Default 10 minutes. */
  timeoutMs?: number
  /** Retries after the first attempt, on 429, 5xx, 529 (overloaded) and network faults. Default 2. */
  maxRetries?: number
  retry?: RetryTiming
  /**
   * Another client's Messages endpoint (the SDK's AnthropicBedrock or AnthropicVertex
   * `messages`): the same requests and streams, sent to that platform with its own auth.
   */
  messages?: MessagesEndpoint
}

/**
 * ModelClient over `@anthropic-ai/sdk` for the Messages API (`api: "anthropic"`): streaming,
 * tools, extended thinking round-tripped with its signatures, prompt-caching breakpoints, usage
 * with cache reads and writes. The SDK's own retries are off: the adapter's loop
 * (adapters/shared/model-retry.ts) retries 429, 5xx, 529 `overloaded_error` and transport faults,
 * also when an `error` event arrives inside the stream before anything reached the caller, and
 * never once an event has. No provider compaction: sessions compact locally.
 */
export function createAnthropicModelClient(options: AnthropicModelClientOptions): ModelClient {
  const messages = options.messages ?? new Messages(sdkClient(options))
  const policy = retryPolicy(options, classifyAnthropicFailure, isAnthropicUserAbort)
  return {
    stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      return retryingStream(policy, request.signal, () => streamMessages(messages, request))
    },
  }
}

/**
 * The SDK's base client with only the Messages resource: the full `Anthropic` client carries
 * every resource of the API (beta, files, models, tools), three times the code in a Worker.
 */
function sdkClient(options: AnthropicModelClientOptions): BaseAnthropic {
  const credential = options.apiKey
    ? { apiKey: options.apiKey }
    : options.authToken
      ? { authToken: options.authToken }
      : undefined
  if (!credential) {
    throw new TurnlineError(
      'model_not_configured',
      'The Anthropic adapter needs an API key (ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL alone for a gateway that needs none) or a bearer token (ANTHROPIC_AUTH_TOKEN).',
    )
  }
  // Everything explicit, so the SDK never consults process.env / Deno.env or a credentials file
  // for these settings.
  return new BaseAnthropic({
    ...credential,
    baseURL: options.baseURL || 'https://api.anthropic.com',
    webhookKey: null,
    logLevel: 'off',
    maxRetries: 0,
    ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  })
}
