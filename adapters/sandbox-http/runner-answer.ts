import type * as z from 'zod'
import { TurnlineError } from '../../src/contract/errors.ts'
import {
  type ExecCapture,
  REFUSAL_CODES,
  type RefusalCode,
  RunnerErrorBodySchema,
} from '../../src/contract/runner-answers.ts'
import type { ExecSnapshot, RunnerResult } from '../../src/ports/sandbox-runner.ts'

/**
 * A runner's answer as a result: 2xx parsed with the route's schema, a 4xx refusal with a known
 * code as `{ ok: false }`, anything else thrown as 'runner_unavailable' (retryable for 5xx and
 * 429, not for 401 or an answer that does not parse).
 */
export function readAnswer<S extends z.ZodType>(
  route: string,
  response: Response,
  answer: string,
  schema: S,
): RunnerResult<z.output<S>> {
  if (response.status >= 200 && response.status < 300) {
    const parsed = schema.safeParse(safeJson(answer))
    if (!parsed.success) {
      throw unavailable(`sandbox runner gave a malformed answer to ${route}`, false, { route })
    }
    return { ok: true, value: parsed.data }
  }
  const error = RunnerErrorBodySchema.safeParse(safeJson(answer))
  const code = error.success ? error.data.error.code : undefined
  const message = error.success ? error.data.error.message : answer.slice(0, 500)
  if (code && (REFUSAL_CODES as readonly string[]).includes(code) && response.status < 500) {
    const details = error.success ? error.data.error.details : undefined
    return {
      ok: false,
      refusal: { code: code as RefusalCode, message, ...(details ? { details } : {}) },
    }
  }
  const details = { route, status: response.status, ...(code ? { code } : {}) }
  if (response.status === 401) {
    throw unavailable(`sandbox runner rejected the request: ${message}`, false, details)
  }
  const retryAfter = Number(response.headers.get('retry-after'))
  throw unavailable(
    `sandbox runner answered ${response.status} to ${route}: ${message}`,
    response.status >= 500 || response.status === 429,
    details,
    undefined,
    Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined,
  )
}

export function unavailable(
  message: string,
  retryable: boolean,
  details: Record<string, unknown>,
  cause?: unknown,
  retryAfter?: number,
): TurnlineError {
  return new TurnlineError('runner_unavailable', message, {
    retryable,
    details,
    ...(cause !== undefined ? { cause } : {}),
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  })
}

export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The wire capture in the port's shape. */
export function snapshot(c: ExecCapture): ExecSnapshot {
  return {
    execSessionId: c.exec_session_id,
    requestId: c.request_id,
    toolCallId: c.tool_call_id,
    command: c.command,
    workdir: c.workdir,
    backend: c.backend,
    state:
      c.state === 'running'
        ? { status: 'running', ...(c.pid !== undefined ? { pid: c.pid } : {}) }
        : c.state === 'exited'
          ? { status: 'exited', exitCode: c.exit_code ?? -1 }
          : { status: 'lost' },
    attached: c.attached,
    output: {
      from: c.output.from,
      to: c.output.to,
      head: c.output.head,
      tail: c.output.tail,
      omittedBytes: c.output.omitted_bytes,
    },
    totalOutputBytes: c.total_output_bytes,
    spool: c.spool,
    wallTimeMs: c.wall_time_ms,
    ...(c.waited_ms !== undefined
      ? { wait: { waitedMs: c.waited_ms, timedOut: c.timed_out ?? false } }
      : {}),
  }
}
