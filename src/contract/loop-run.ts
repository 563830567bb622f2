import * as z from 'zod'
import { parseCron } from '../shared/cron-expression.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * A loop run: the loop stepped in the background, one step a background work item, until the
 * loop's own end — kept in the loop state (`run`), so `GET /v1/loops/{id}` shows it. And a
 * loop's schedule (`schedule`): a cron expression whose every minute starts a run.
 */

/** Why a run stopped: the loop's end or a point where a person is needed. */
export const LOOP_RUN_STOP_REASONS = [
  'completed',
  'failed',
  'paused',
  'budget',
  'waiting',
  'verification',
  'error',
] as const
export type LoopRunStopReason = (typeof LOOP_RUN_STOP_REASONS)[number]

export const LoopRunSchema = lazySchema(() =>
  z
    .object({
      run_id: z.string().min(1).max(80).describe('The run.'),
      trigger: z
        .enum(['api', 'autorun', 'schedule'])
        .describe('What started it: `POST …/run`, `autorun` at creation, or the schedule.'),
      state: z.enum(['running', 'stopped']).describe('`running` until the run stops.'),
      started_at: z.string().describe('RFC 3339 start time.'),
      first_step: z.number().int().nonnegative().describe('The step index the run started at.'),
      stopped_at: z.string().optional().describe('RFC 3339 time it stopped.'),
      stop_reason: z
        .enum(LOOP_RUN_STOP_REASONS)
        .optional()
        .describe(
          '`completed`, `failed`, `paused` (by `control`), `budget` (a limit reached: the loop is paused), `waiting` (a step waits on an approval or a command), `verification` (a step waits on a required verification), `error` (a step could not run).',
        ),
      message: z.string().max(2000).optional().describe('What stopped it, in words.'),
    })
    .describe('The newest background run of the loop (POST /v1/loops/{id}/run).'),
)
export type LoopRun = z.infer<typeof LoopRunSchema>

export const CronSchema = lazySchema(() =>
  z
    .string()
    .max(200)
    .superRefine((value, ctx) => {
      const parsed = parseCron(value)
      if ('error' in parsed) ctx.addIssue({ code: 'custom', message: parsed.error })
    })
    .describe(
      'Five-field cron expression in UTC (minute hour day-of-month month day-of-week), e.g. `0 * * * *`.',
    ),
)

export const LoopScheduleSchema = lazySchema(() =>
  z
    .object({
      cron: CronSchema,
      last_slot: z
        .string()
        .optional()
        .describe('RFC 3339 minute of the newest slot that started (or skipped) a run.'),
    })
    .describe(
      'Starts a run at every minute the cron expression names (a run already running: skipped).',
    ),
)
export type LoopSchedule = z.infer<typeof LoopScheduleSchema>
