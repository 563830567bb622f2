import type { ExecExitCallback } from '../../src/contract/exec-exit-callback.ts'
import { newNonce, signedHeaders } from '../../src/contract/runner-signature.ts'
import { type Backoff, backoffMs } from '../../src/shared/backoff.ts'
import type { Scope } from './exec-registry.ts'
import type { ExecSession } from './exec-session.ts'

export interface CallbackOptions {
  url: string
  secret: string
  /** Deliveries tried at most (default 6). */
  attempts?: number
  /** First retry delay; doubles each time, capped at 30 s (default 500 ms). */
  backoffMs?: number
  timeoutMs?: number
  log?: (entry: Record<string, unknown>) => void
}

export type CallbackPayload = Omit<ExecExitCallback, 'type' | 'nonce' | 'attempt'>

/** The exit notice of a command that exited with `exitCode`. */
export function exitNotice(scope: Scope, session: ExecSession, exitCode: number): CallbackPayload {
  return {
    tenant: scope.tenant,
    session_id: scope.sessionId,
    exec_session_id: session.info.id,
    request_id: session.info.requestId,
    tool_call_id: session.info.toolCallId,
    exit_code: exitCode,
    total_output_bytes: session.total,
    spool_path: session.info.spoolRel,
    spool_complete: session.drained,
    exited_at: session.exitedAt ?? Date.now(),
  }
}

/**
 * Delivers exit notices: signed POSTs, retried with exponential backoff on network errors, 5xx,
 * 408 and 429; any other answer ends the delivery (2xx accepted, 4xx refused). Each attempt is
 * signed afresh with a new nonce and counts `attempt` up; receivers deduplicate by
 * `exec_session_id`.
 */
export class ExitCallbacks {
  readonly #pending = new Set<AbortController>()

  /** The pause before a retry: `backoffMs` doubling, at most 30 s. */
  readonly #backoff: Backoff

  constructor(private readonly options: CallbackOptions) {
    this.#backoff = { firstMs: options.backoffMs ?? 500, maxMs: 30_000, jitter: 'none' }
  }

  send(payload: CallbackPayload): Promise<boolean> {
    const abort = new AbortController()
    this.#pending.add(abort)
    return this.#deliver(payload, abort.signal).finally(() => this.#pending.delete(abort))
  }

  async #deliver(payload: CallbackPayload, signal: AbortSignal): Promise<boolean> {
    const { url, secret } = this.options
    const attempts = this.options.attempts ?? 6
    for (let attempt = 1; attempt <= attempts && !signal.aborted; attempt++) {
      const body: ExecExitCallback = { type: 'exec.exited', nonce: newNonce(), ...payload, attempt }
      const text = JSON.stringify(body)
      let status = 0
      let failure = ''
      try {
        const response = await fetch(url, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            'content-type': 'application/json',
            ...(await signedHeaders(secret, text, Date.now())),
          },
          body: text,
          signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.timeoutMs ?? 10_000)]),
        })
        status = response.status
        await response.body?.cancel()
      } catch (error) {
        failure = (error as Error).message
      }
      if (status >= 200 && status < 300) return true
      const retryable = status === 0 || status >= 500 || status === 408 || status === 429
      this.options.log?.({
        event: 'exit_callback_failed',
        level: 'warn',
        exec_session_id: payload.exec_session_id,
        attempt,
        status,
        ...(failure ? { error: failure } : {}),
        will_retry: retryable && attempt < attempts,
      })
      if (!retryable) return false
      if (attempt < attempts) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, backoffMs(attempt - 1, this.#backoff))
          signal.addEventListener('abort', () => {
            clearTimeout(timer)
            resolve()
          })
        })
      }
    }
    return false
  }

  /** Stops retries in flight (runner shutdown). */
  cancelAll(): void {
    for (const abort of this.#pending) abort.abort()
  }
}
