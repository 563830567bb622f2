import type { EngineState } from '../../contract/engine-state.ts'
import type { SessionStartSource } from '../../contract/hook-config.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import { hookContext, hookDeps } from '../turn/turn-tools.ts'
import { sessionStartPayload, stopPayload } from './hook-payloads.ts'
import { type HookRunnerDeps, hookWarnings, runHooks } from './run-hooks.ts'

/** Records an answer kept whole in the batch with the hook's effect (TurnWriter). */
type OnKept = HookRunnerDeps['onKept']

/** `stop` hooks when a turn completes; failures become warnings, never a lost turn. */
export async function fireStop(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  warnings: string[],
  signal?: AbortSignal,
  onKept?: OnKept,
  timeLeft?: InvocationTimeLeft,
): Promise<void> {
  if (!state.config.hooks.some((hook) => hook.event === 'stop')) return
  const outcome = await runHooks(
    'stop',
    stopPayload(hookContext(deps, ref), { lastAssistantMessage: state.last_assistant_text ?? '' }),
    state.config.hooks,
    hookDeps(deps, ref, state, signal, onKept, timeLeft),
  )
  warnings.push(...hookWarnings('stop', outcome))
}

/** `session_start` hooks (startup, resume, fork, compact). */
export async function fireSessionStart(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  source: SessionStartSource,
  onKept?: OnKept,
  /** The platform's bound (its hooks stop before it), or the signal that stops them. */
  bound: { timeLeft?: InvocationTimeLeft | undefined; signal?: AbortSignal | undefined } = {},
): Promise<string[]> {
  if (!state.config.hooks.some((hook) => hook.event === 'session_start')) return []
  const outcome = await runHooks(
    'session_start',
    sessionStartPayload(hookContext(deps, ref), source),
    state.config.hooks,
    hookDeps(deps, ref, state, bound.signal, onKept, bound.timeLeft),
  )
  return hookWarnings('session_start', outcome)
}
