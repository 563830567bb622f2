/**
 * A response that streams while its work runs, without committing to a status too early: the
 * work starts first; if it settles before anything is pushed, or fails before the response has
 * started, the answer is an ordinary response (so a 409 stays a 409). Once a chunk has been
 * pushed while the work still runs, the response starts (200) and later chunks follow live; a
 * failure after that point is written into the stream by `failure`.
 *
 * A client that disconnects does not abort the work: a turn still commits, and its outcome is
 * readable afterwards (events feed, Idempotency-Key retry).
 */
export interface LiveStreamOptions<T> {
  run: (push: (chunk: string) => void) => Promise<T>
  /** Text written after the work succeeded (may also be the whole body). */
  tail: (result: T) => string
  /** Text written when the work fails after the response started. */
  failure: (error: unknown) => string
  /** The response for a failure before the response started. */
  errorResponse: (error: unknown) => Response
  headers: Record<string, string>
  /** A chunk sent when nothing else was written for `everyMs` (SSE comment keep-alives). */
  heartbeat?: { everyMs: number; chunk: string }
}

type Outcome<T> = { ok: true; result: T } | { ok: false; error: unknown }

const encoder = new TextEncoder()

export async function liveResponse<T>(options: LiveStreamOptions<T>): Promise<Response> {
  const pending: string[] = []
  let sink: ((chunk: string) => void) | undefined
  let signalFirst: () => void = () => {}
  const firstPush = new Promise<void>((resolve) => {
    signalFirst = resolve
  })
  const push = (chunk: string) => {
    if (sink) sink(chunk)
    else {
      pending.push(chunk)
      signalFirst()
    }
  }
  const state: { settled?: Outcome<T> } = {}
  const work: Promise<Outcome<T>> = Promise.resolve()
    .then(() => options.run(push))
    .then(
      (result) => (state.settled = { ok: true, result }),
      (error: unknown) => (state.settled = { ok: false, error }),
    )
  await Promise.race([firstPush, work])

  const { settled } = state
  if (settled) {
    if (!settled.ok) return options.errorResponse(settled.error)
    let text: string
    try {
      text = pending.join('') + options.tail(settled.result)
    } catch (error) {
      return options.errorResponse(error)
    }
    return new Response(text, { status: 200, headers: options.headers })
  }

  let closed = false
  let timer: ReturnType<typeof setInterval> | undefined
  let lastWrite = Date.now()
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const write = (chunk: string) => {
        if (closed || chunk === '') return
        try {
          controller.enqueue(encoder.encode(chunk))
          lastWrite = Date.now()
        } catch {
          closed = true
        }
      }
      for (const chunk of pending.splice(0)) write(chunk)
      sink = write
      const { heartbeat } = options
      if (heartbeat) {
        timer = setInterval(
          () => {
            if (Date.now() - lastWrite >= heartbeat.everyMs) write(heartbeat.chunk)
          },
          Math.max(10, Math.floor(heartbeat.everyMs / 2)),
        )
      }
      void work.then((outcome) => {
        clearInterval(timer)
        let text: string
        try {
          text = outcome.ok ? options.tail(outcome.result) : options.failure(outcome.error)
        } catch (error) {
          text = options.failure(error)
        }
        write(text)
        sink = () => {}
        if (!closed) {
          closed = true
          controller.close()
        }
      })
    },
    cancel() {
      closed = true
      clearInterval(timer)
    },
  })
  return new Response(stream, { status: 200, headers: options.headers })
}
