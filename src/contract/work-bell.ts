import * as z from 'zod'
import { CounterSchema, documentCodec } from './stored-document.ts'
import { WorkIdSchema, type WorkLocation } from './work-record.ts'

/**
 * The body of a queue message that rings the bell for background work (Lambda's SQS queue):
 * it only says where to look — the work itself is the record in the store
 * (contract/work-record.ts), written before the message is sent. A message that is lost changes
 * nothing (the periodic sweep finds the record), and one delivered twice finds the record
 * claimed or gone. `callbacks` asks for one pass over the completion callbacks' outbox.
 */
export const WORK_BELL_FORMAT = 'turnline.work-bell'
export const WORK_BELL_VERSION = 1

export const WorkLocationSchema = z.object({
  tenant: z.string().min(1).max(128),
  session_id: z.string().min(1).max(256),
  work_id: WorkIdSchema,
})

export const WorkBellSchema = z.object({
  format: z.literal(WORK_BELL_FORMAT),
  version: z.literal(WORK_BELL_VERSION),
  /** `work`: run the record at `work`. `callbacks`: deliver what the outbox has due. */
  kind: z.enum(['work', 'callbacks']),
  work: WorkLocationSchema.optional(),
  /**
   * How often this work's bell was rung again, delayed, after the work found its session busy or
   * its quota used up; past a few the sweep takes over (a sweep's bells start there).
   */
  rings: CounterSchema,
})
export type WorkBell = z.infer<typeof WorkBellSchema>

const codec = documentCodec(WorkBellSchema, {
  format: WORK_BELL_FORMAT,
  version: WORK_BELL_VERSION,
  what: 'work bell',
})

/** Reads a bell. Throws TurnlineError('corrupt_data' | 'unsupported_version'). */
export const parseWorkBell: (input: Uint8Array | string) => WorkBell = codec.parse

/** Compact JSON of a bell, keys in schema order. */
export const serializeWorkBell: (bell: WorkBell) => string = codec.serialize

/** The bell for one work record. */
export function workBell(at: WorkLocation, rings = 0): WorkBell {
  const work = { tenant: at.tenant, session_id: at.session_id, work_id: at.work_id }
  return { format: WORK_BELL_FORMAT, version: WORK_BELL_VERSION, kind: 'work', work, rings }
}

/** The bell for the completion callbacks' outbox. */
export function callbacksBell(): WorkBell {
  return { format: WORK_BELL_FORMAT, version: WORK_BELL_VERSION, kind: 'callbacks', rings: 0 }
}
