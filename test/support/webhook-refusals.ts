import { type SignedMessage, signMessage } from './signed-callback.ts'

/**
 * Deliveries every runtime refuses the same way, and the answers (status and body) it gives:
 * the runtime tests send them to Node, Deno, workerd and the Lambda bundle alike.
 */

/** Signed as the number parseInt reads, under a `webhook-timestamp` that is not unix seconds. */
export function timestampNotSeconds(secret: string): SignedMessage {
  const seconds = Math.floor(Date.now() / 1000)
  const message = signMessage(secret, '{"event":"x"}', undefined, seconds)
  message.headers['webhook-timestamp'] = `${seconds}x`
  return message
}

export const TIMESTAMP_NOT_SECONDS = {
  status: 401,
  body: {
    error: {
      code: 'unauthorized',
      message: 'webhook rejected: webhook-timestamp is not unix seconds',
    },
  },
}

/** An empty body: under the default prompt (`{{body}}`), no turn to run. */
export const emptyDelivery = (secret: string): SignedMessage => signMessage(secret, '')

export const EMPTY_PROMPT = {
  status: 400,
  body: {
    error: {
      code: 'invalid_input',
      message:
        "the delivery's prompt is empty: the hook's prompt is the body, and the body is empty",
      details: { field: 'body' },
    },
  },
}
