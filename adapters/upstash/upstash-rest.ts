import { deadlineSignal } from '../../src/shared/deadline-signal.ts'

/** Transport retries of a request that could not be sent or whose answer was lost. */
export type UpstashRetry =
  | false
  | {
      /** Retries after the first attempt (default 5). */
      retries?: number
      /** Pause before retry n (from 0; default `Math.exp(n) * 50` ms). */
      backoff?: (retryCount: number) => number
    }

export interface UpstashRestOptions {
  url: string
  token: string
  /** How requests are sent (Node's entries: adapters/node-http's fetch, a third of the global one's CPU or less). */
  fetch: typeof fetch
  /** Each HTTP request is aborted after this long (its attempts together). */
  attemptMs: number
  retry?: UpstashRetry
  /**
   * Commands sent in the same tick go as one `/pipeline` request (default true). Each command
   * keeps its own answer; a pipeline is not atomic, and none of ours needs it to be.
   */
  pipelining?: boolean
}

/** What Upstash answered a command with: `{"error": …}` (or an HTTP error), or an unreadable body. */
export class UpstashReplyError extends Error {
  constructor(
    message: string,
    readonly reason: 'command_error' | 'unauthorized' | 'bad_response',
  ) {
    super(message)
    this.name = 'UpstashReplyError'
  }
}

interface Queued {
  command: string[]
  resolve: (result: unknown) => void
  reject: (error: unknown) => void
}

/**
 * Redis commands over Upstash's REST API on a given fetch: `POST /` with one command, or
 * `POST /pipeline` with the commands of one tick. Replies are passed on raw (no base64 encoding
 * is asked for: our values are UTF-8 text). As `@upstash/redis` does, it sends back the
 * database's latest `upstash-sync-token` (read-your-writes across replicas) and retries a
 * request that could not be sent; an answer, error or not, is never resent here (the caller's
 * deadline decides: `callRedis`).
 */
export class UpstashRest {
  readonly #options: UpstashRestOptions
  readonly #base: string
  #syncToken = ''
  #queue: Queued[] = []
  #requests = 0

  constructor(options: UpstashRestOptions) {
    this.#options = options
    this.#base = options.url.replace(/\/$/, '')
  }

  /** HTTP requests sent so far (each is one round trip; a retry is another). */
  get requestCount(): number {
    return this.#requests
  }

  /** Sends one command, e.g. `['get', key]`; resolves to its `result`. */
  send(command: string[]): Promise<unknown> {
    if (this.#options.pipelining === false) {
      return this.#post(this.#base, JSON.stringify(command)).then(single)
    }
    return new Promise((resolve, reject) => {
      if (this.#queue.length === 0) queueMicrotask(() => this.#flush())
      this.#queue.push({ command, resolve, reject })
    })
  }

  async #flush(): Promise<void> {
    const batch = this.#queue
    this.#queue = []
    try {
      const body = JSON.stringify(batch.map((queued) => queued.command))
      const answers = pipelineAnswers(
        await this.#post(`${this.#base}/pipeline`, body),
        batch.length,
      )
      for (const [i, queued] of batch.entries()) {
        const answer = answers[i]
        if (answer && 'error' in answer) queued.reject(commandError(answer.error))
        else queued.resolve(answer?.result ?? null)
      }
    } catch (error) {
      for (const queued of batch) queued.reject(error)
    }
  }

  /** One request (with its transport retries); the parsed body of a 2xx answer. */
  async #post(url: string, body: string): Promise<unknown> {
    const { token, fetch, attemptMs, retry } = this.#options
    const retries = retry === false ? 0 : (retry?.retries ?? 5)
    const backoff = (retry === false ? undefined : retry?.backoff) ?? ((n) => Math.exp(n) * 50)
    // Not AbortSignal.timeout: its timer would run to its end after every call (deadline-signal.ts).
    const { signal, clear } = deadlineSignal(attemptMs)
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      ...(this.#syncToken === '' ? {} : { 'upstash-sync-token': this.#syncToken }),
    }
    let answer: Response | undefined
    let text: string
    try {
      for (let attempt = 0; answer === undefined; attempt += 1) {
        try {
          this.#requests += 1
          answer = await fetch(url, { method: 'POST', headers, body, signal })
        } catch (error) {
          if (signal.aborted || attempt >= retries) throw error
          await new Promise((resolve) => setTimeout(resolve, backoff(attempt)))
        }
      }
      text = await answer.text()
    } finally {
      clear()
    }
    this.#syncToken = answer.headers.get('upstash-sync-token') ?? this.#syncToken
    const parsed = parse(text)
    if (answer.ok) return parsed
    const message = errorOf(parsed) ?? `HTTP ${answer.status}`
    throw answer.status === 401
      ? new UpstashReplyError(message, 'unauthorized')
      : commandError(message)
  }
}

type Answer = { result: unknown } | { error: string }

function parse(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    throw new UpstashReplyError('the answer is not JSON', 'bad_response')
  }
}

function errorOf(parsed: unknown): string | undefined {
  if (typeof parsed !== 'object' || parsed === null || !('error' in parsed)) return undefined
  return String(parsed.error)
}

function isAnswer(value: unknown): value is Answer {
  return (
    typeof value === 'object' &&
    value !== null &&
    ('result' in value || ('error' in value && typeof value.error === 'string'))
  )
}

function single(parsed: unknown): unknown {
  if (!isAnswer(parsed)) throw new UpstashReplyError('the answer has no result', 'bad_response')
  if ('error' in parsed) throw commandError(parsed.error)
  return parsed.result
}

function pipelineAnswers(parsed: unknown, count: number): Answer[] {
  if (!Array.isArray(parsed) || parsed.length !== count || !parsed.every(isAnswer)) {
    throw new UpstashReplyError(`the pipeline's answer is not ${count} results`, 'bad_response')
  }
  return parsed
}

const commandError = (message: string) => new UpstashReplyError(message, 'command_error')
