/** The content type of every JSON answer. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/**
 * A JSON answer: `text`, already serialized, as JSON_TYPE with any further `headers` (after the
 * content type). Every route and error answer that is JSON is built here.
 */
export function jsonResponse(
  text: string,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return new Response(text, { status, headers: { 'content-type': JSON_TYPE, ...headers } })
}
