import { isTurnlineError } from './errors.ts'

/**
 * A destination the egress rules refused (adapters/shared/egress-policy.ts): a fetch rejects with it,
 * naming the reason in Turnline's words, on every runtime.
 */
export class EgressRefused extends Error {
  override readonly name = 'EgressRefused'
}

/**
 * What Turnline says, in an event or to the model, about a request that got no HTTP answer (or
 * whose answer broke off). The runtimes' own texts differ for the same fault — Node's undici
 * `fetch failed` or `terminated`, Deno's `error sending request for url (…)`, workerd's `Network
 * connection lost.` — and a stored event must not depend on where its turn ran; those texts
 * belong in the operator's log (the error itself, as a cause). Turnline's own refusals (an
 * egress rule, a typed error) keep their message.
 */
export function transportFailureText(error: unknown): string {
  if (error instanceof EgressRefused || isTurnlineError(error)) return error.message
  return 'the connection failed or broke off before a complete answer arrived'
}
