import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import { causeOf, TurnlineConnectionError } from './errors.ts'
import { eventOf } from './event-feed.ts'
import type { ExecRequest } from './requests.ts'
import { lines } from './sse.ts'
import type { Transport } from './transport.ts'

/**
 * `POST /v1/exec`: the NDJSON of bare ThreadEvents, `thread.started` … `thread.completed`, like
 * `vtcode exec --json`. A fault after the stream started arrives as an `error` event. Exec is
 * not resumable (each call is a new session): a dropped connection is a TurnlineConnectionError.
 */
export async function* execEvents(
  transport: Transport,
  request: ExecRequest,
  signal: AbortSignal | undefined,
): AsyncGenerator<ParsedThreadEvent, void, undefined> {
  const response = await transport.send('POST', '/v1/exec', { body: request, signal })
  if (!response.body) return
  const reader = lines(response.body)
  try {
    for (;;) {
      let next: IteratorResult<string>
      try {
        next = await reader.next()
      } catch (error) {
        signal?.throwIfAborted()
        throw new TurnlineConnectionError(`the exec stream broke: ${causeOf(error)}`, undefined, {
          cause: error,
        })
      }
      if (next.done) return
      if (next.value.trim() !== '') yield eventOf(next.value)
    }
  } finally {
    await reader.return(undefined).catch(() => {})
  }
}
