import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import { type SweepResult, sweepRetention } from '../../src/store/retention-sweep.ts'
import type { Deps } from '../deps.ts'
import type { EntryLog } from './entry-app.ts'

/**
 * One scheduled retention sweep (the Worker's cron trigger, the Lambda bundle's
 * `index.retention`): VT Code's policy over every workspace of every tenant, because short-lived
 * instances never reach the every-25th-creation pass of a long-running server. Logs one line
 * (`retentionSweepLine`) and rejects when a workspace failed, so the platform records the run as
 * failed.
 */
export async function scheduledRetention(
  deps: Deps,
  run: { now: number; cron?: string },
  log: EntryLog = (line) => console.log(line),
): Promise<SweepResult> {
  const result = await sweepRetention(deps.service.sessions.objects, { now: run.now })
  log(retentionSweepLine(result, run))
  if (result.failed.length > 0) {
    throw new Error(`retention: ${result.failed.length} workspace(s) failed (see the log line)`)
  }
  return result
}

/**
 * The one line a retention sweep logs, the same from every runtime and from the retention
 * command: `{"ts", "level", "msg":"retention sweep", cron?, workspaces, deleted, failed, work}`,
 * `deleted` the number of sessions deleted (not their ids: a line of bounded size), `failed`
 * the workspaces that failed with their errors, `work` background work's records deleted; level
 * `error` when a workspace failed.
 */
export function retentionSweepLine(result: SweepResult, run: { now: number; cron?: string }) {
  const entry = {
    level: result.failed.length > 0 ? 'error' : 'info',
    msg: 'retention sweep',
    ...(run.cron === undefined ? {} : { cron: run.cron }),
    workspaces: result.workspaces,
    deleted: result.deleted.reduce((n, d) => n + d.sessions.length, 0),
    failed: result.failed,
    ...(result.work === undefined ? {} : { work: result.work }),
  }
  return operatorLogLine(entry, { nowMs: run.now })
}
