/**
 * The typed Turnline client (`turnline/client`): Web-standard fetch, ReadableStream and
 * TextDecoder only, so it runs in browsers, Deno, Workers and Node. Request and response types
 * are those of the server's own zod schemas (src/contract). Guide: docs/client.md.
 */
export type { ErrorCode } from '../src/contract/errors.ts'
export { ERROR_CODES } from '../src/contract/errors.ts'
export type {
  ParsedThreadEvent,
  ThreadEvent,
  ThreadEventType,
  UnknownThreadEvent,
} from '../src/contract/thread-event.ts'
export type { ThreadItem } from '../src/contract/thread-item.ts'
export type { ArtifactPutBody } from './agent-layer-client.ts'
export { ArtifactsClient, LoopsClient } from './agent-layer-client.ts'
export {
  TurnlineAnswerTooLargeError,
  TurnlineApiError,
  type TurnlineApiErrorOptions,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from './errors.ts'
export type { EventPage, EventsOptions } from './event-feed.ts'
export {
  type ByteRange,
  type OutputArtifactBytes,
  OutputArtifactsClient,
} from './output-artifacts-client.ts'
export type * from './requests.ts'
export { ResponsesClient, runningResponseOf } from './responses-client.ts'
export type { RetryOptions } from './retry.ts'
export { type SseFrame, sseFrames } from './sse.ts'
export type { FetchLike } from './transport.ts'
export { newIdempotencyKey, TurnStream } from './turn-stream.ts'
export { TurnlineClient } from './turnline-client.ts'
export type * from './types.ts'
export { turnEvents } from './types.ts'
