import { sweepCallbacks } from '../../src/core/session-api.ts'
import { operatorLogLine } from '../../src/shared/operator-log-line.ts'
import type { Deps } from '../deps.ts'
import type { EntryLog } from './entry-app.ts'

/**
 * One sweep of the completion callbacks' outbox from a schedule (the Worker's cron trigger, the
 * Lambda bundle's `index.callbacks`): runtimes without a loop between requests deliver notices,
 * and retry them, when it runs (docs/configuration.md#completion-callbacks). Logs one line,
 * `{"ts", "level":"info", "msg":"callback sweep", markers, next_due_at?}`, after the lines of the
 * deliveries it made, each an operator log line (docs/configuration.md#operator-log).
 */
export async function scheduledCallbacks(
  deps: Deps,
  log: EntryLog = (line) => console.log(line),
): Promise<void> {
  const callbacks = deps.service.callbacks
  if (!callbacks) return
  const clock = deps.service.clock
  const stamped = (entry: Record<string, unknown>) =>
    log(operatorLogLine(entry, { nowMs: clock.now(), level: 'info' }))
  const result = await sweepCallbacks({ ...callbacks, clock, log: stamped }, deps.service.sessions)
  stamped({
    msg: 'callback sweep',
    markers: result.markers,
    ...(result.nextDueAt === undefined
      ? {}
      : { next_due_at: new Date(result.nextDueAt).toISOString() }),
  })
}
