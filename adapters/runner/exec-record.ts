import { rename, writeFile } from 'node:fs/promises'
import * as z from 'zod'
import type { ExecInfo, ExecSession } from './exec-session.ts'
import type { SpoolFile, SpoolIdentity } from './spool-file.ts'

const fields = {
  exec_session_id: z.string(),
  request_id: z.string(),
  tool_call_id: z.string(),
  command: z.string(),
  workdir: z.string(),
  backend: z.enum(['pipe', 'pty']),
  spool_path: z.string(),
  /** The spool is `spools/<spool_path>` of the runner's state folder, not in the workspace. */
  spool_private: z.literal(true).optional(),
  started_at: z.number(),
  exit_code: z.number().int().optional(),
  exited_at: z.number().optional(),
  total_output_bytes: z.number().int().optional(),
  /**
   * With an exit: whether `total_output_bytes` is all the output. False when a process the
   * command left still held its output when this was written (rewritten once it let go).
   */
  spool_complete: z.boolean().optional(),
}

const DECIMAL = z.string().regex(/^\d{1,20}$/)

/**
 * What the runner remembers of one command (`.runner-state/<tenant>/<session>/exec/<id>.json`).
 * Format 2 adds `spool_identity`, the device, inode and birth time (`btime`, absent in the
 * first records of this format) of the spool file the runner created, so a spool reopened after
 * a restart is checked to be that very file. Format 1 records (no
 * identity) are still read; their spools are reopened without following any symlink, as regular
 * files only, but without the identity check.
 */
const ExecRecordSchema = z.discriminatedUnion('version', [
  z.object({ version: z.literal(1), ...fields }),
  z.object({
    version: z.literal(2),
    ...fields,
    spool_identity: z.object({ dev: DECIMAL, ino: DECIMAL, btime: DECIMAL.optional() }),
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

/** The record of a command: when it started, and once it has exited, how it ended. */
export function execRecordText(
  exec: ExecInfo,
  spool: SpoolFile,
  startedAt: number,
  done?: ExecSession,
): string {
  const identity = spool.identity
  if (!identity) throw new Error('a spool the runner created always has an identity')
  return serializeExecRecord({
    exec_session_id: exec.id,
    request_id: exec.requestId,
    tool_call_id: exec.toolCallId,
    command: exec.command,
    workdir: exec.workdir,
    backend: exec.backend,
    spool_path: exec.spoolRel,
    ...(exec.spoolPrivate ? { spool_private: true as const } : {}),
    spool_identity: identity,
    started_at: startedAt,
    ...(done?.exitCode !== undefined
      ? {
          exit_code: done.exitCode,
          exited_at: done.exitedAt ?? Date.now(),
          total_output_bytes: done.total,
          spool_complete: done.drained,
        }
      : {}),
  })
}

/** What a record says of its command. */
export function execInfoOf(record: ExecRecord): ExecInfo {
  return {
    id: record.exec_session_id,
    requestId: record.request_id,
    toolCallId: record.tool_call_id,
    command: record.command,
    workdir: record.workdir,
    backend: record.backend,
    spoolRel: record.spool_path,
    ...(record.spool_private ? { spoolPrivate: true as const } : {}),
  }
}

/** Writes a command's record (`execRecordText`) to `file` whole: a temporary file, renamed. */
export async function saveExecRecord(file: string, text: string): Promise<void> {
  await writeFile(`${file}.tmp`, text)
  await rename(`${file}.tmp`, file)
}
