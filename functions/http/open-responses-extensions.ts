/**
 * Turnline's extension items and events on `/v1/responses` (`vtcode:tool_call`,
 * `vtcode:thread_completed`, …) are sent only to a client that asks for them with this header
 * (`Turnline-Extensions: vtcode`, a comma-separated list). A header, not a body field: it is how
 * the reader wants the stream shown, not part of what the model is asked, so it applies alike to
 * `POST /v1/responses` and to reading or resuming a stored response (`GET /v1/responses/{id}`),
 * and every client can set it once as a default header. Without it a response holds only what
 * the specification's schema defines, which strict clients (the `openai` client, the AI SDK, the
 * compliance suite) validate against a closed union. Resume a stream with the same setting: the
 * sequence numbers count the events that are shown.
 */
export const EXTENSIONS_HEADER = 'turnline-extensions'

export function wantsExtensions(header: string | undefined): boolean {
  if (header === undefined) return false
  return header
    .split(',')
    .map((token) => token.trim().toLowerCase())
    .includes('vtcode')
}
