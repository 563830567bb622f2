import type { HookConfig, HookEvent } from '../../contract/hook-config.ts'
import type { KeptHookAnswer } from '../../contract/kept-hook-answers.ts'
import type { OutputArtifact } from '../../contract/output-artifact.ts'
import type { HookCommandRunner } from '../../ports/hook-command-runner.ts'
import {
  deadlineWatch,
  type InvocationDeadline,
  stoppedBeforeDeadline,
} from '../turn/invocation-deadline.ts'
import { runCommandHook } from './command-hook.ts'
import type { HookKeeping } from './hook-artifact.ts'
import { hookMatches } from './hook-matcher.ts'
import { type HookPayloads, matcherSubject } from './hook-payloads.ts'
import { callHttpHook, type HookAttempt, type HookHttpPolicy } from './http-hook.ts'

/**
 * Runs the hooks of one event. Every matching hook (config order) runs concurrently within its
 * own timeout; a failing, slow or unreachable hook never throws and never costs the turn — it is
 * recorded in `results`. Only `pre_tool_use` can be denied, and only by a blocking hook: an HTTP
 * 2xx JSON `{"decision":"deny","reason":…}` (or the Claude Code–style equivalents), a command's
 * exit code 2, or — with `fail_closed` — any failure. A non-blocking hook's deny is recorded and
 * ignored. Rules and examples: docs/hooks.md.
 */

/** Events whose hooks can stop what they announce. */
export const DENIABLE_HOOK_EVENTS: ReadonlySet<HookEvent> = new Set<HookEvent>(['pre_tool_use'])

export interface HookRunnerDeps {
  tenant: string
  /** Allow-list, tenant signing secret and fetch: pass the service's HttpToolPolicy. */
  http: HookHttpPolicy
  /** Runs command hooks in the session's sandbox; without it command hooks fail (recorded). */
  runCommand?: HookCommandRunner
  /** Epoch ms (durations, signature timestamp); defaults to Date.now. */
  now?: () => number
  /** The turn's cancellation. */
  signal?: AbortSignal
  /**
   * The platform's bound on the invocation (Lambda's timeout): a hook still running once less
   * than its stop margin is left is stopped, a failure as its configuration treats one (a
   * blocking `fail_closed` hook denies), its error saying so.
   */
  deadline?: InvocationDeadline
  /**
   * Where answers over the inline limit are kept whole (the session's output artifacts, hidden
   * from the model); an honoured deny's kept answer, which its reason names, is shown to it.
   */
  kept?: HookKeeping
  /**
   * Told of each answer kept whole, to record it in the batch that commits the hook's effect
   * (`TurnWriter.recordHookAnswer`); without it the answer is kept but listed nowhere.
   */
  onKept?: (answer: KeptHookAnswer) => void
}

export interface HookResult {
  /** Index of the hook in the session's `hooks`. */
  index: number
  /** The hook's `name`, else `<event>#<index>`. */
  name: string
  type: HookConfig['type']
  blocking: boolean
  /** The hook ran and answered (a deny is an answer, so it is ok). */
  ok: boolean
  durationMs: number
  error?: string
  timedOut?: boolean
  status?: number
  exitCode?: number
  /** The hook answered deny. */
  decision?: 'deny'
  reason?: string
  /** True when this hook's deny (or fail-closed failure) counts. */
  honoured?: boolean
  /** The output artifact keeping the hook's whole answer, when it was over the inline limit. */
  artifact?: Pick<OutputArtifact, 'id' | 'size' | 'lines'>
}

export interface HookRunOutcome {
  /** Set when a blocking hook denied a deniable event: the first such hook, in config order. */
  denied?: { reason: string; hook: string }
  results: HookResult[]
}

export async function runHooks<E extends HookEvent>(
  event: E,
  payload: HookPayloads[E],
  hooks: readonly HookConfig[],
  deps: HookRunnerDeps,
  /** Other names of the payload's tool a matcher may give (an MCP tool's own: ruleNames). */
  aliases: readonly string[] = [],
): Promise<HookRunOutcome> {
  const now = deps.now ?? Date.now
  const subjects = [matcherSubject(payload), ...aliases]
  const selected = hooks
    .map((hook, index) => ({ hook, index }))
    .filter(
      ({ hook }) =>
        hook.event === event && subjects.some((subject) => hookMatches(hook.matcher, subject)),
    )
  if (selected.length === 0) return { results: [] }
  const body = JSON.stringify(payload)
  const deniable = DENIABLE_HOOK_EVENTS.has(event)

  const watch =
    deps.deadline && deadlineWatch(deps.deadline.clock, deps.deadline.timeLeft, deps.signal)
  const run = { event, payload, body, deps, signal: watch?.signal ?? deps.signal }
  const results = await Promise.all(
    selected.map(async ({ hook, index }): Promise<HookResult> => {
      const started = now()
      let attempt = await attemptHook(hook, run, started)
      const durationMs = Math.max(0, now() - started)
      // Stopped as the platform's timeout neared, not cancelled: a failure, told as such.
      if (watch?.reached() && !deps.signal?.aborted && attempt.error === 'cancelled') {
        attempt = { ok: false, answer: {}, error: stoppedBeforeDeadline(durationMs) }
      }
      return toResult(hook, index, event, attempt, { durationMs, deniable })
    }),
  ).finally(() => watch?.clear())

  if (deps.onKept) for (const answer of keptAnswers(event, payload, results)) deps.onKept(answer)
  return outcomeOf(results, deps)
}

/**
 * The outcome: denied by the first hook whose deny (or fail-closed failure) counts. The deny's
 * reason, which the model is given, names that hook's kept answer: the model may then read it.
 */
async function outcomeOf(results: HookResult[], deps: HookRunnerDeps): Promise<HookRunOutcome> {
  const denier = results.find((result) => result.honoured)
  if (!denier) return { results }
  if (denier.artifact && deps.kept) {
    await deps.kept.keeping.artifacts.showToModel(denier.artifact.id)
  }
  const reason =
    denier.decision === 'deny'
      ? (denier.reason ?? `denied by hook ${denier.name}`)
      : `hook ${denier.name} failed (${denier.error ?? 'unknown error'}) and is fail-closed`
  return { denied: { reason, hook: denier.name }, results }
}

/** One hook's run, stopped when `signal` aborts (the turn's, or the platform's timeout near). */
async function attemptHook(
  hook: HookConfig,
  run: {
    event: HookEvent
    payload: HookPayloads[HookEvent]
    body: string
    deps: HookRunnerDeps
    signal: AbortSignal | undefined
  },
  started: number,
): Promise<HookAttempt> {
  const { deps, signal, body, payload } = run
  try {
    if (hook.type !== 'http') {
      return await runCommandHook(hook, payload, body, deps.runCommand, signal, deps.kept)
    }
    const request = {
      tenant: deps.tenant,
      sessionId: payload.session_id,
      event: run.event,
      now: started,
      ...(signal ? { signal } : {}),
    }
    return await callHttpHook(hook, body, request, deps.http, deps.kept)
  } catch (error) {
    return { ok: false, answer: {}, error: `hook failed: ${(error as Error).message}` }
  }
}

/** The answers of `results` kept whole, as a batch records them. */
function keptAnswers(
  event: HookEvent,
  payload: HookPayloads[HookEvent],
  results: readonly HookResult[],
): KeptHookAnswer[] {
  const toolCallId = 'tool_call_id' in payload ? payload.tool_call_id : null
  return results.flatMap(({ artifact, name, index, type }) =>
    artifact
      ? [
          {
            event,
            hook: name,
            hook_index: index,
            hook_type: type,
            ...(toolCallId !== null ? { tool_call_id: toolCallId } : {}),
            artifact_id: artifact.id,
            size: artifact.size,
            lines: artifact.lines,
          },
        ]
      : [],
  )
}

function toResult(
  hook: HookConfig,
  index: number,
  event: HookEvent,
  attempt: HookAttempt,
  { durationMs, deniable }: { durationMs: number; deniable: boolean },
): HookResult {
  const denies = attempt.answer.decision === 'deny'
  const failedClosed = !attempt.ok && hook.fail_closed
  return {
    index,
    name: hook.name ?? `${event}#${index}`,
    type: hook.type,
    blocking: hook.blocking,
    ok: attempt.ok,
    durationMs,
    ...(attempt.error !== undefined ? { error: attempt.error } : {}),
    ...(attempt.timedOut ? { timedOut: true } : {}),
    ...(attempt.status !== undefined ? { status: attempt.status } : {}),
    ...(attempt.exitCode !== undefined ? { exitCode: attempt.exitCode } : {}),
    ...(denies ? { decision: 'deny' as const } : {}),
    ...(attempt.answer.reason !== undefined ? { reason: attempt.answer.reason } : {}),
    ...((denies || failedClosed) && deniable ? { honoured: hook.blocking } : {}),
    ...(attempt.artifact !== undefined
      ? {
          artifact: {
            id: attempt.artifact.id,
            size: attempt.artifact.size,
            lines: attempt.artifact.lines,
          },
        }
      : {}),
  }
}

/** Notices for the turn's warnings: failures, timeouts, and denies that did not count. */
export function hookWarnings(event: HookEvent, outcome: HookRunOutcome): string[] {
  const warnings: string[] = []
  for (const result of outcome.results) {
    if (!result.ok) {
      warnings.push(`${event} hook ${result.name} failed: ${result.error ?? 'unknown error'}`)
    } else if (result.decision === 'deny' && !result.honoured) {
      warnings.push(
        `${event} hook ${result.name} answered deny, ignored: ` +
          (result.blocking ? `${event} cannot be denied` : 'the hook is not blocking'),
      )
    }
  }
  return warnings
}
