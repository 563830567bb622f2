import * as z from 'zod'
import type { SpoolIdentity } from './spool-file.ts'

const fields = {
  exec_session_id: z.string(),
  request_id: z.string(),
  tool_call_id: z.string(),
  command: z.string(),
  workdir: z.string(),
  backend: z.enum(['pipe', 'pty']),
  spool_path: z.string(),
  started_at: z.number(),
  exit_code: z.number().int().optional(),
  exited_at: z.number().optional(),
  total_output_bytes: z.number().int().optional(),
}

const DECIMAL = z.string().regex(/^\d{1,20}$/)

/**
 * What the runner remembers of one command (`.runner-state/<tenant>/<session>/exec/<id>.json`).
 * Format 2 adds `spool_identity`, the device and inode of the spool file the runner created,
 * so a spool reopened after a restart is checked to be that very file. Format 1 records (no
 * identity) are still read; their spools are reopened without following any symlink, as regular
 * files only, but without the identity check.
 */
const ExecRecordSchema = z.discriminatedUnion('version', [
  z.object({ version: z.literal(1), ...fields }),
  z.object({
    version: z.literal(2),
    ...fields,
    spool_identity: z.object({ dev: DECIMAL, ino: DECIMAL }),
  }),
])

export type ExecRecord = z.infer<typeof ExecRecordSchema>

export function parseExecRecord(text: string): ExecRecord {
  return ExecRecordSchema.parse(JSON.parse(text))
}

/** The identity a record holds, if its format has one. */
export function recordedIdentity(record: ExecRecord): SpoolIdentity | undefined {
  return record.version === 2 ? record.spool_identity : undefined
}

/** The current format's record (always written as format 2). */
export function serializeExecRecord(
  record: Omit<Extract<ExecRecord, { version: 2 }>, 'version'>,
): string {
  return JSON.stringify({ version: 2, ...record })
}
