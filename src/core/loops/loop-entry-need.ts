import type { LoopRunState } from '../../contract/loop-state.ts'
import { parseCron } from '../../shared/cron-expression.ts'

/** The deployment-wide folders that list loops: scheduled ones, ones with a run started. */
export type LoopEntryKind = 'schedules' | 'loop-runs'

/** The cron of a schedule that still fires: none for a completed or failed loop. */
export function firingCron(state: LoopRunState) {
  if (!state.schedule || state.status === 'completed' || state.status === 'failed') return undefined
  const cron = parseCron(state.schedule.cron)
  return 'error' in cron ? undefined : cron
}

/** The loop needs its `kind` entry: a schedule that fires, a run that runs. */
export const needsEntry = (kind: LoopEntryKind, state: LoopRunState) =>
  kind === 'schedules' ? firingCron(state) !== undefined : state.run?.state === 'running'
