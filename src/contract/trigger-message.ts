import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'
import { readDocument, requireFormat, requireVersion, validateDocument } from './stored-document.ts'
import { WorkIdSchema, type WorkLocation } from './work-record.ts'

/**
 * The body of a platform queue message (a Cloudflare Queue, an SQS queue) that wakes a worker.
 * It carries no work: the work is the record in the store (contract/work-record.ts), written
 * before the message is sent. `work` names one pending record to run; `callbacks` asks for one
 * pass over the completion callbacks' outbox (notices were just recorded). Losing one changes
 * nothing but when the work runs (the scheduled sweep finds it); delivering one twice runs
 * nothing twice (the record is gone, or its session's lease and idempotency key stop the second
 * run). Versioned because messages outlive a deployment: a message sent by the old code may be
 * delivered to the new.
 */
export const TRIGGER_MESSAGE_FORMAT = 'turnline.trigger'
export const TRIGGER_MESSAGE_VERSION = 1

const Tag = {
  format: z.literal(TRIGGER_MESSAGE_FORMAT),
  version: z.literal(TRIGGER_MESSAGE_VERSION),
}

export const TriggerMessageSchema = lazySchema(() =>
  z.discriminatedUnion('kind', [
    z.object({
      ...Tag,
      kind: z.literal('work'),
      tenant: z.string().min(1).max(128),
      session_id: z.string().min(1).max(200),
      work_id: WorkIdSchema,
    }),
    z.object({ ...Tag, kind: z.literal('callbacks') }),
  ]),
)
export type TriggerMessage = z.infer<typeof TriggerMessageSchema>

const WHAT = 'work trigger message'

/**
 * Reads a message body: the JSON text (SQS) or the value a JSON queue message carries
 * (Cloudflare Queues). Throws TurnlineError('corrupt_data' | 'unsupported_version').
 */
export function parseTriggerMessage(input: unknown): TriggerMessage {
  const doc =
    typeof input === 'string' || input instanceof Uint8Array
      ? readDocument(input, WHAT)
      : readDocument(JSON.stringify(input ?? null), WHAT)
  requireFormat(doc, 'format', TRIGGER_MESSAGE_FORMAT, WHAT)
  requireVersion(doc, 'version', [TRIGGER_MESSAGE_VERSION], WHAT)
  return validateDocument(TriggerMessageSchema, doc, WHAT)
}

/** The message that wakes a worker for one pending record. */
export function workMessage(at: WorkLocation): TriggerMessage {
  return {
    format: TRIGGER_MESSAGE_FORMAT,
    version: TRIGGER_MESSAGE_VERSION,
    kind: 'work',
    tenant: at.tenant,
    session_id: at.session_id,
    work_id: at.work_id,
  }
}

/** The message that asks for one pass over the callbacks' outbox. */
export function callbacksMessage(): TriggerMessage {
  return { format: TRIGGER_MESSAGE_FORMAT, version: TRIGGER_MESSAGE_VERSION, kind: 'callbacks' }
}
