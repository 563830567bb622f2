/**
 * How an answer's body is read chunk by chunk (the model's stream, a tool's output): the part of
 * `ReadableStreamDefaultReader` those readers use.
 */
export interface BodyReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>
  cancel(): Promise<void>
}

/**
 * A method a `fetch` may put on the Responses it makes to hand out a reader of the body without
 * a web stream (the Node entries' fetch on `node:http`: adapters/node-http/node-response.ts). It
 * answers undefined when the body is gone or already taken another way; it takes the body as
 * `getReader()` would (the body is used from then on).
 */
export const BODY_READER: unique symbol = Symbol.for('turnline.body-reader')

interface OffersBodyReader {
  [BODY_READER]?: () => BodyReader | undefined
}

/** A reader of `response`'s body (its own, when the fetch offers one), or undefined without a body. */
export function bodyReader(response: Response): BodyReader | undefined {
  const offered = (response as Response & OffersBodyReader)[BODY_READER]
  const own = typeof offered === 'function' ? offered.call(response) : undefined
  return own ?? response.body?.getReader()
}
