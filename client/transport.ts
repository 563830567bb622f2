import type * as z from 'zod'
import { byteCount, declaredLength, positiveBytes, refuseDeclared } from './answer-bound.ts'
import {
  apiErrorOf,
  causeOf,
  retryAfterOf,
  TurnlineAnswerTooLargeError,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from './errors.ts'
import { readUpTo } from './sse.ts'

/** What is read of an error answer's body: an error body of the API is far smaller. */
const MAX_ERROR_BODY_BYTES = 64 * 1024

/**
 * The default bound of a whole JSON answer: 256 MiB, four times the largest request body a
 * server takes (TURNLINE_MAX_BODY_BYTES at most 64 MiB), which its largest answers echo (a
 * session's config), and sixteen times the 16 MiB of events one invocation may hold (a turn's
 * answer).
 */
export const DEFAULT_MAX_ANSWER_BYTES = 256 * 1024 * 1024

/** Any fetch: the platform's, a test's, or an app's own `fetch` (no network at all). */
export type FetchLike = (request: Request) => Promise<Response>

export interface TransportOptions {
  /** The server's root, e.g. `https://turnline.example.com` (a path prefix is kept). */
  baseUrl: string
  /** Sent as `Authorization: Bearer <apiKey>`; it selects the tenant. */
  apiKey?: string | undefined
  fetch?: FetchLike | undefined
  /** Sent with every request (a tracing header, a proxy's credentials). */
  headers?: Record<string, string> | undefined
  /**
   * The most a whole JSON answer may hold, in bytes (default {@link DEFAULT_MAX_ANSWER_BYTES});
   * past it the call fails with a TurnlineAnswerTooLargeError and the rest is not read.
   */
  maxAnswerBytes?: number | undefined
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined> | undefined
  body?: unknown
  headers?: Record<string, string | undefined> | undefined
  signal?: AbortSignal | undefined
  /** Reported with a failure, so the caller can retry the same operation safely. */
  idempotencyKey?: string | undefined
  /**
   * Longest wait for the answer's head (none: no limit), for a stream whose server answers at
   * once: past it the request fails as a TurnlineConnectionError, which a stream resumes.
   */
  headTimeoutMs?: number | undefined
}

/** One HTTP request at a time: URLs, auth, error mapping. Web-standard globals only. */
export class Transport {
  readonly baseUrl: string
  readonly maxAnswerBytes: number
  private readonly apiKey: string | undefined
  private readonly fetcher: FetchLike
  private readonly headers: Record<string, string>

  constructor(options: TransportOptions) {
    let base: URL
    try {
      base = new URL(options.baseUrl)
    } catch {
      throw new TypeError(`baseUrl is not a URL: ${options.baseUrl}`)
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new TypeError(`baseUrl must be http(s): ${options.baseUrl}`)
    }
    // A fetch refuses such a URL, with the password in its message: refused here, not shown.
    if (base.username !== '' || base.password !== '') {
      throw new TypeError(
        'baseUrl must not hold a user or password (user:password@): give the API key as apiKey',
      )
    }
    this.baseUrl = base.href.replace(/\/+$/, '')
    this.apiKey = options.apiKey
    // Bound: a browser's fetch called as a method of another object throws "Illegal invocation".
    this.fetcher = options.fetch ?? ((request) => globalThis.fetch(request))
    this.headers = options.headers ?? {}
    this.maxAnswerBytes = positiveBytes(
      'maxAnswerBytes',
      options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES,
    )
  }

  url(path: string, query: RequestOptions['query'] = {}): string {
    const search = new URLSearchParams()
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) search.set(key, String(value))
    }
    const text = search.toString()
    return `${this.baseUrl}${path}${text ? `?${text}` : ''}`
  }

  /**
   * Sends a request and answers its response when it is a 2xx; otherwise throws a
   * TurnlineApiError (the server's code and message), or a TurnlineConnectionError when the
   * server cannot be reached. An abort rejects with the signal's reason.
   */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers }
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`
    for (const [name, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) headers[name] = value
    }
    const limit = options.headTimeoutMs
    const controller = limit === undefined ? undefined : linkedController(options.signal)
    const signal = controller?.signal ?? options.signal
    const request = new Request(this.url(path, options.query), {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      ...(signal ? { signal } : {}),
    })
    let response: Response
    try {
      const answer = this.fetcher(request)
      response = await (controller && limit !== undefined
        ? within(answer, limit, controller)
        : answer)
    } catch (error) {
      options.signal?.throwIfAborted()
      throw new TurnlineConnectionError(
        `cannot reach ${this.baseUrl}: ${causeOf(error)}`,
        options.idempotencyKey,
        { cause: error },
      )
    }
    if (response.ok) return response
    // Only the start of an error body is shown: the rest of a page that never ends is not read.
    const text = await readUpTo(response, MAX_ERROR_BODY_BYTES).catch(() => '')
    throw apiErrorOf(response.status, text, {
      retryAfterSeconds: retryAfterOf(response),
      idempotencyKey: options.idempotencyKey,
    })
  }

  /** Sends a request and validates its JSON answer with `schema`. */
  async json<S extends z.ZodType>(
    method: string,
    path: string,
    schema: S,
    options: RequestOptions = {},
  ): Promise<z.output<S>> {
    const response = await this.send(method, path, options)
    return parseJson(
      schema,
      await readText(response, this.maxAnswerBytes, options),
      response.status,
    )
  }
}

/** A controller that aborts with `outer` (the caller's signal), and can abort alone. */
function linkedController(outer: AbortSignal | undefined): AbortController {
  const controller = new AbortController()
  if (outer?.aborted) controller.abort(outer.reason)
  else outer?.addEventListener('abort', () => controller.abort(outer.reason), { once: true })
  return controller
}

/**
 * The answer's head, or a rejection once `ms` pass without it: the request is aborted, and a
 * head that comes after all has its body let go (a fetch that ignores the signal, as an app's
 * own may, still answers).
 */
function within(answer: Promise<Response>, ms: number, controller: AbortController) {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new Error(`no answer within ${ms} ms`)
      controller.abort(error)
      reject(error)
    }, ms)
  })
  answer.then(
    (response) => {
      if (controller.signal.aborted) response.body?.cancel().catch(() => {})
    },
    () => {},
  )
  return Promise.race([answer, late]).finally(() => clearTimeout(timer))
}

/**
 * The whole body, at most `maxBytes` of it: one that says (Content-Length) or turns out to be
 * longer fails with a TurnlineAnswerTooLargeError, the rest not read. A connection that breaks
 * while it is read is a TurnlineConnectionError.
 */
export async function readText(
  response: Response,
  maxBytes: number,
  options: RequestOptions = {},
): Promise<string> {
  await refuseDeclared(response.body, response.status, maxBytes, declaredLength(response))
  if (!response.body) return ''
  const count = byteCount(response.status, maxBytes)
  const decoder = new TextDecoder()
  const reader = response.body.getReader()
  const pieces: string[] = []
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      count(value)
      pieces.push(decoder.decode(value, { stream: true }))
    }
    pieces.push(decoder.decode())
    return pieces.join('')
  } catch (error) {
    if (error instanceof TurnlineAnswerTooLargeError) throw error
    options.signal?.throwIfAborted()
    throw new TurnlineConnectionError(
      `the connection broke while reading the answer: ${causeOf(error)}`,
      options.idempotencyKey,
      { cause: error },
    )
  } finally {
    await reader.cancel().catch(() => {})
  }
}

/** Validates an answer's text against its contract schema. */
export function parseJson<S extends z.ZodType>(schema: S, text: string, status: number) {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new TurnlineProtocolError(`the answer is not JSON: ${text.slice(0, 200)}`, status)
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    throw new TurnlineProtocolError(
      `the answer does not match the API contract: ${parsed.error.message.slice(0, 500)}`,
      status,
    )
  }
  return parsed.data as z.output<S>
}
