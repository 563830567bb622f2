import { CallbackWorker } from '../../src/core/session-api.ts'
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
  const worker = new CallbackWorker(
    { ...callbacks, clock: deps.service.clock, log: (entry) => log({ level: 'info', ...entry }) },
    deps.service.sessions,
    deps.config.TURNLINE_CALLBACK_SWEEP_MS,
  )
  callbacks.policy.wake = worker.wake
  worker.start()
  return worker
}
