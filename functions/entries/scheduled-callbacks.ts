import { sweepCallbacks } from '../../src/core/session-api.ts'
import type { Deps } from '../deps.ts'
import type { EntryLog } from './entry-app.ts'

/**
 * One sweep of the completion callbacks' outbox from a schedule (the Worker's cron trigger, the
 * Lambda bundle's `index.callbacks`): runtimes without a loop between requests deliver notices,
 * and retry them, when it runs (docs/configuration.md#completion-callbacks). Logs one line,
 * `{"msg":"callback sweep", markers, next_due_at?}`.
 */
export async function scheduledCallbacks(
  deps: Deps,
  log: EntryLog = (line) => console.log(line),
): Promise<void> {
  const callbacks = deps.service.callbacks
  if (!callbacks) return
  const result = await sweepCallbacks(
    {
      ...callbacks,
      clock: deps.service.clock,
      log: (entry) => log(JSON.stringify({ level: 'info', ...entry })),
    },
    deps.service.sessions,
  )
  log(
    JSON.stringify({
      msg: 'callback sweep',
      markers: result.markers,
      ...(result.nextDueAt === undefined
        ? {}
        : { next_due_at: new Date(result.nextDueAt).toISOString() }),
    }),
  )
}
