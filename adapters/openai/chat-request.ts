import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from 'openai/error'

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface ChatEndpoint {
  /** `<baseURL>/chat/completions`. */
  url: string
  apiKey: string
  fetch: FetchLike
  /** Until the response headers arrive, as the SDK's per-request timeout. */
  timeoutMs: number
}

/** The SDK's default per-request timeout (10 minutes). */
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000

export function chatEndpoint(options: {
  baseURL: string
  apiKey: string
  fetch?: FetchLike | undefined
  timeoutMs?: number | undefined
}): ChatEndpoint {
  return {
    url: `${options.baseURL.replace(/\/+$/, '')}/chat/completions`,
    apiKey: options.apiKey,
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  }
}

/**
 * POSTs a streamed Chat Completions request with one `fetch`, and fails exactly as the SDK's
 * request pipeline does (its error classes, built the way it builds them), without its
 * per-request header merging, request logging and option plumbing, which cost more CPU than
 * the request itself on a fast server. An abort by the caller is APIUserAbortError; a transport
 * failure is APIConnectionError (APIConnectionTimeoutError when it timed out, or when
 * `timeoutMs` passed before the headers); an HTTP error is `APIError.generate` over the body's
 * JSON (else its text). The body of a successful response is the caller's to read (and cancel);
 * the caller's signal still aborts it.
 */
export async function postChat(
  endpoint: ChatEndpoint,
  /** The request's JSON (chat-stream.ts `chatRequestText`). */
  body: string,
  signal?: AbortSignal,
  headers: Record<string, string> = {},
): Promise<Response> {
  if (signal?.aborted) throw new APIUserAbortError()
  const controller = new AbortController()
  const abort = () => controller.abort()
  signal?.addEventListener('abort', abort, { once: true })
  const timer = setTimeout(abort, endpoint.timeoutMs)
  let response: Response
  try {
    response = await endpoint.fetch.call(undefined, endpoint.url, {
      method: 'POST',
      headers: {
        accept: 'application/json',
        'content-type': 'application/json',
        authorization: `Bearer ${endpoint.apiKey}`,
        ...headers,
      },
      body,
      signal: controller.signal,
    })
  } catch (error) {
    if (signal?.aborted) throw new APIUserAbortError()
    const cause = error instanceof Error ? error : new Error(String(error))
    const timedOut =
      cause.name === 'AbortError' ||
      /timed? ?out/i.test(String(cause) + ('cause' in cause ? String(cause.cause) : ''))
    if (timedOut) throw new APIConnectionTimeoutError()
    throw new APIConnectionError({ cause })
  } finally {
    clearTimeout(timer)
  }
  if (!response.ok) {
    const text = await response
      .text()
      .catch((error: unknown) => (error instanceof Error ? error.message : String(error)))
    const json = parseJson(text)
    throw APIError.generate(
      response.status,
      json as object | undefined,
      json ? undefined : text,
      response.headers,
    )
  }
  return response
}

/** JSON.parse, or undefined when the text is not JSON (as the SDK reads an error body). */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}
