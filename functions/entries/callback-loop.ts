import { CallbackWorker } from '../../src/core/session-api.ts'
import { stampedEntry } from '../../src/shared/operator-log-line.ts'
import type { Deps } from '../deps.ts'
import { jsonLines } from '../http/request-log.ts'

/**
 * The delivery loop of a long-running server (Node: `npm start`, Docker): delivers notices as
 * soon as they are recorded, retries when due, and sweeps the outbox every
 * TURNLINE_CALLBACK_SWEEP_MS for what other instances (or a dead one) left
 * (docs/http-api.md#completion-callbacks).
 */
export function startCallbackLoop(deps: Deps): CallbackWorker | undefined {
  const callbacks = deps.service.callbacks
  if (!callbacks) return undefined
  const log = deps.service.log ?? (deps.config.TURNLINE_LOG === 'json' ? jsonLines : () => {})
  const clock = deps.service.clock
  // An operator log line like every other: `ts`, `level`, `msg` (docs/configuration.md#operator-log).
  const stamped = (entry: Record<string, unknown>) =>
    log(stampedEntry(entry, { nowMs: clock.now(), level: 'info' }))
  const worker = new CallbackWorker(
    { ...callbacks, clock, log: stamped },
    deps.service.sessions,
    deps.config.TURNLINE_CALLBACK_SWEEP_MS,
  )
  callbacks.policy.wake = worker.wake
  worker.start()
  return worker
}
