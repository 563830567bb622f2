import { type SweepResult, sweepRetention } from '../../src/store/retention-sweep.ts'
import type { Deps } from '../deps.ts'
import type { EntryLog } from './entry-app.ts'

/**
 * One scheduled retention sweep (the Worker's cron trigger, the Lambda bundle's
 * `index.retention`): VT Code's policy over every workspace of every tenant, because short-lived
 * instances never reach the every-25th-creation pass of a long-running server. Logs one line,
 * `{"ts", "level", "msg":"retention sweep", cron?, workspaces, deleted, failed}` (level `error`
 * when a workspace failed), and rejects when a workspace failed, so the platform records the run
 * as failed.
 */
export async function scheduledRetention(
  deps: Deps,
  run: { now: number; cron?: string },
  log: EntryLog = (line) => console.log(line),
): Promise<SweepResult> {
  const result = await sweepRetention(deps.service.sessions.objects, { now: run.now })
  log(
    JSON.stringify({
      ts: new Date(run.now).toISOString(),
      level: result.failed.length > 0 ? 'error' : 'info',
      msg: 'retention sweep',
      ...(run.cron === undefined ? {} : { cron: run.cron }),
      workspaces: result.workspaces,
      deleted: result.deleted.reduce((n, d) => n + d.sessions.length, 0),
      failed: result.failed,
    }),
  )
  if (result.failed.length > 0) {
    throw new Error(`retention: ${result.failed.length} workspace(s) failed (see the log line)`)
  }
  return result
}
