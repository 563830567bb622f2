import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import { causeOf, TurnlineConnectionError, TurnlineProtocolError } from './errors.ts'
import { eventOf } from './event-feed.ts'
import type { ExecRequest } from './requests.ts'
import { lines } from './sse.ts'
import type { Transport } from './transport.ts'

/**
 * `POST /v1/exec`: the NDJSON of bare ThreadEvents, `thread.started` … `thread.completed`, like
 * `vtcode exec --json`. A fault after the stream started arrives as an `error` event. It is sent
 * with an Idempotency-Key, from which the server derives the run's session: a dropped connection
 * is a TurnlineConnectionError carrying the key, and the same request sent again with it runs
 * nothing twice (its events come again from the start, bare events carrying no seq).
 *
 * It asks for `Prefer: keep-alive` (blank lines while the run sends nothing). A server that
 * applies it is held to `idleMs` of silence, its answer's head included: past it the stream
 * fails as a dropped connection. One that does not (an older server) is waited without limit,
 * as its silence may be a long command's.
 */
export async function* execEvents(
  transport: Transport,
  request: ExecRequest,
  options: { signal?: AbortSignal | undefined; idempotencyKey: string; idleMs: number },
): AsyncGenerator<ParsedThreadEvent, void, undefined> {
  const { signal, idempotencyKey } = options
  const response = await transport.send('POST', '/v1/exec', {
    body: request,
    headers: { 'idempotency-key': idempotencyKey, prefer: 'keep-alive' },
    signal,
    idempotencyKey,
    headTimeoutMs: options.idleMs,
  })
  if (!response.body) return
  const applied = (response.headers.get('preference-applied') ?? '')
    .split(',')
    .some((preference) => preference.trim().toLowerCase() === 'keep-alive')
  const reader = lines(response.body, applied ? { idleMs: options.idleMs } : {})
  try {
    for (;;) {
      let next: IteratorResult<string>
      try {
        next = await reader.next()
      } catch (error) {
        signal?.throwIfAborted()
        // A line without end is the server's fault, not the connection's.
        if (error instanceof TurnlineProtocolError) throw error
        throw new TurnlineConnectionError(
          `the exec stream broke: ${causeOf(error)}`,
          idempotencyKey,
          { cause: error },
        )
      }
      if (next.done) return
      if (next.value.trim() !== '') yield eventOf(next.value)
    }
  } finally {
    await reader.return(undefined).catch(() => {})
  }
}
