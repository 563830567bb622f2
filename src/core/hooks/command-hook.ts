import type { CommandHook } from '../../contract/hook-config.ts'
import type { HookCommandResult, HookCommandRunner } from '../../ports/hook-command-runner.ts'
import { bounded, parseHookAnswer } from './hook-answer.ts'
import { type HookKeeping, keptAnswerNote, keptAnswerText } from './hook-artifact.ts'
import type { HookPayload } from './hook-payloads.ts'
import type { HookAttempt } from './http-hook.ts'

/** VT Code's hook environment, with the Claude Code aliases. */
export function hookEnvironment(payload: HookPayload): Record<string, string> {
  const env: Record<string, string> = {
    VT_PROJECT_DIR: payload.cwd,
    CLAUDE_PROJECT_DIR: payload.cwd,
    VT_SESSION_ID: payload.session_id,
    CLAUDE_SESSION_ID: payload.session_id,
    VT_HOOK_EVENT: payload.hook_event_name,
  }
  if (payload.transcript_path !== null) {
    env.VT_TRANSCRIPT_PATH = payload.transcript_path
    env.CLAUDE_TRANSCRIPT_PATH = payload.transcript_path
  }
  return env
}

/**
 * Runs a command hook: exit 0 is success (stdout may carry a JSON answer), exit 2 denies with
 * stderr as the reason, any other code is a failure. Never throws.
 * Long: the run, its timeout and the reading of its answer, one after the other.
 */
export async function runCommandHook(
  hook: CommandHook,
  payload: HookPayload,
  body: string,
  runner: HookCommandRunner | undefined,
  signal?: AbortSignal,
  /** Reads back output kept as an artifact (over the inline limit). */
  kept?: HookKeeping,
): Promise<HookAttempt> {
  if (!runner) return { ok: false, answer: {}, error: 'no command runner is configured' }
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', onAbort, { once: true })
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), hook.timeout_ms)
  })
  const cancelled = new Promise<'cancelled'>((resolve) => {
    if (controller.signal.aborted) resolve('cancelled')
    controller.signal.addEventListener('abort', () => resolve('cancelled'), { once: true })
  })
  try {
    const run = runner(hook.command, {
      stdin: body,
      env: hookEnvironment(payload),
      timeoutMs: hook.timeout_ms,
      signal: controller.signal,
    })
    run.catch(() => {}) // settled later than the timeout: nobody waits for it any more
    const result = await Promise.race([run, timeout, cancelled])
    if (result === 'cancelled') return { ok: false, answer: {}, error: 'cancelled' }
    if (result === 'timeout') {
      controller.abort(new Error('hook timed out'))
      return {
        ok: false,
        answer: {},
        timedOut: true,
        error: `timed out after ${hook.timeout_ms} ms`,
      }
    }
    if (result.artifact && kept) {
      const artifact = result.artifact
      const read = await keptAnswerText(kept.keeping.artifacts, result.artifact)
      if ('error' in read)
        return { ok: false, answer: {}, exitCode: result.exitCode, error: read.error, artifact }
      const note = ` (${keptAnswerNote(result.artifact)})`
      const attempt = answerOf({ ...result, stdout: read.text })
      if (attempt.answer.reason !== undefined || attempt.answer.decision === 'deny') {
        attempt.answer.reason = `${attempt.answer.reason ?? 'denied'}${note}`
      }
      if (attempt.error !== undefined) attempt.error += note
      return { ...attempt, artifact }
    }
    return answerOf(result)
  } catch (error) {
    if (signal?.aborted) return { ok: false, answer: {}, error: 'cancelled' }
    return { ok: false, answer: {}, error: `could not run: ${(error as Error).message}` }
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}

/** What a finished command hook answered: exit 0 (stdout may decide), 2 (deny) or a failure. */
function answerOf(result: HookCommandResult): HookAttempt {
  if (result.exitCode === 0) {
    return { ok: true, answer: parseHookAnswer(result.stdout), exitCode: 0 }
  }
  if (result.exitCode === 2) {
    const reason = result.stderr.trim() || result.stdout.trim()
    return {
      ok: true,
      answer: { decision: 'deny', ...(reason ? { reason: bounded(reason) } : {}) },
      exitCode: 2,
    }
  }
  const detail = result.stderr.trim() ? `: ${bounded(result.stderr.trim(), 500)}` : ''
  return {
    ok: false,
    answer: {},
    exitCode: result.exitCode,
    error: `exited with code ${result.exitCode}${detail}`,
  }
}
