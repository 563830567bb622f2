import type { KeptHookAnswer } from '../../contract/kept-hook-answers.ts'
import { serviceLog } from '../engine/service-log.ts'
import { deadlineWatch } from '../turn/invocation-deadline.ts'
import type { CompactionArtifacts } from './compaction-artifacts.ts'
import type { CompactionOutcome, CompactionRun } from './compaction-run.ts'

/**
 * A compaction in a request the platform bounds (Lambda's timeout, `run.deadline`): its model
 * request (a local summary or the provider's compaction) and its hooks (`pre_compact`, and
 * `session_start` with source `compact`) run under one deadline watch, stopped once less than
 * the stop margin is left. A compaction so stopped is `stopped`: nothing of it is kept — no
 * archive, no summary, no hook answer or warning, the transcript and the compaction state as
 * they were (`compact` checks `run.cut()` before it changes any of them, and removes the archive
 * it wrote) — so the next request compacts again. What its model call used is counted all the
 * same (the provider bills it). Without a deadline `compact` runs as it is.
 */
export async function withinDeadline(
  run: CompactionRun,
  compact: (run: CompactionRun) => Promise<CompactionOutcome>,
): Promise<CompactionOutcome> {
  const { deadline } = run
  if (!deadline) return compact(run)
  const watch = deadlineWatch(deadline.clock, deadline.timeLeft, run.signal)
  const stopped: CompactionOutcome = { kind: 'stopped' }
  const warnings: string[] = []
  const answers: KeptHookAnswer[] = []
  const timed: CompactionRun = {
    ...run,
    signal: watch.signal,
    warnings,
    recordHookAnswer: (answer) => answers.push(answer),
    cut: () => watch.reached(),
  }
  try {
    const outcome = await compact(timed)
    if (outcome.kind === 'stopped' || (outcome.kind === 'failed' && watch.reached())) {
      return stopped
    }
    run.warnings.push(...warnings)
    for (const answer of answers) run.recordHookAnswer?.(answer)
    return outcome
  } catch (error) {
    if (watch.reached()) return stopped
    throw error
  } finally {
    watch.clear()
  }
}

/** Removes the archive and memory envelope of a compaction that was stopped (create-only writes). */
export async function discardArtifacts(
  run: CompactionRun,
  artifacts: Pick<CompactionArtifacts, 'historyPath' | 'envelopePath'>,
): Promise<void> {
  const { objects } = run.deps.sessions
  await Promise.all(
    [artifacts.envelopePath, artifacts.historyPath].map((key) =>
      objects.delete(key).catch((error: unknown) => {
        serviceLog(run.deps)({
          msg: 'removing a stopped compaction artifact failed',
          key,
          error: String(error),
        })
      }),
    ),
  )
}
