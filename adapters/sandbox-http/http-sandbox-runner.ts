import type * as z from 'zod'
import { TurnlineError } from '../../src/contract/errors.ts'
import {
  ExecCaptureSchema,
  FileReadResultSchema,
  FileWriteResultSchema,
  GitLogResultSchema,
  PatchResultSchema,
  SpoolChunkSchema,
  WorkspaceEraseResultSchema,
  WorktreeResultSchema,
} from '../../src/contract/runner-answers.ts'
import { newNonce, signedHeaders } from '../../src/contract/runner-signature.ts'
import { transportFailureText } from '../../src/contract/transport-failure.ts'
import type {
  ExecPollRequest,
  ExecSnapshot,
  ExecStartRequest,
  ExecWaitRequest,
  ExecWriteRequest,
  RunnerResult,
  SandboxRunner,
  SandboxScope,
} from '../../src/ports/sandbox-runner.ts'
import { backoffMs } from '../../src/shared/backoff.ts'
import { base64Bytes } from '../../src/shared/base64.ts'
import { readAnswer, snapshot, unavailable } from './runner-answer.ts'

export interface HttpSandboxRunnerOptions {
  /**
   * Base URL of the runner, e.g. http://127.0.0.1:8788, or a function answering the current one
   * (a runner child process that was restarted listens on another port).
   */
  url: string | (() => string)
  secret: string
  fetch?: typeof fetch
  now?: () => number
  /** Allowance per request on top of the time the runner is asked to hold it (default 30 s). */
  timeoutMs?: number
  /** Longest single wait request; longer waits are several requests (default 240 s). */
  maxWaitChunkMs?: number
  /** Extra attempts of idempotent requests after a transport failure or 5xx (default 2). */
  retries?: number
}

interface CallOptions {
  holdMs?: number
  idempotent?: boolean
}

/** A read: nothing changes on the runner, so a failed attempt is sent again. */
const READ: CallOptions = { idempotent: true }

/**
 * The sandbox runner over HTTP (`docs/runner-protocol.md`), with fetch and WebCrypto only, so it
 * runs in workerd, Deno and Node. Refusals (4xx with a known code) become typed results;
 * everything else throws: transport failures and 5xx as retryable 'runner_unavailable', a
 * rejected signature as non-retryable 'runner_unavailable'.
 */
export class HttpSandboxRunner implements SandboxRunner {
  readonly #url: () => string
  readonly #fetch: typeof fetch
  readonly #now: () => number

  constructor(private readonly options: HttpSandboxRunnerOptions) {
    const { url } = options
    this.#url = typeof url === 'string' ? () => url : url
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init))
    this.#now = options.now ?? Date.now
  }

  start(scope: SandboxScope, r: ExecStartRequest): Promise<RunnerResult<ExecSnapshot>> {
    const body = {
      request_id: r.requestId,
      tool_call_id: r.toolCallId,
      cmd: r.cmd,
      ...(r.workdir !== undefined ? { workdir: r.workdir } : {}),
      tty: r.tty,
      yield_time_ms: r.yieldTimeMs,
      max_output_bytes: r.maxOutputBytes,
      ...(r.network ? { network: true } : {}),
      ...(r.privateOutput ? { private_output: true } : {}),
    }
    return this.#capture('/v1/exec/start', scope, body, { holdMs: r.yieldTimeMs, idempotent: true })
  }

  write(scope: SandboxScope, r: ExecWriteRequest): Promise<RunnerResult<ExecSnapshot>> {
    const body = {
      exec_session_id: r.execSessionId,
      chars: r.chars,
      yield_time_ms: r.yieldTimeMs,
      max_output_bytes: r.maxOutputBytes,
    }
    return this.#capture('/v1/exec/write', scope, body, { holdMs: r.yieldTimeMs })
  }

  poll(scope: SandboxScope, r: ExecPollRequest): Promise<RunnerResult<ExecSnapshot>> {
    const body = {
      exec_session_id: r.execSessionId,
      yield_time_ms: r.yieldTimeMs,
      max_output_bytes: r.maxOutputBytes,
      ...(r.since !== undefined ? { since: r.since } : {}),
    }
    return this.#capture('/v1/exec/poll', scope, body, {
      holdMs: r.yieldTimeMs,
      idempotent: r.since !== undefined,
    })
  }

  /** Long waits are split into requests of at most `maxWaitChunkMs`, capturing from one offset. */
  async wait(scope: SandboxScope, r: ExecWaitRequest): Promise<RunnerResult<ExecSnapshot>> {
    const chunk = this.options.maxWaitChunkMs ?? 240_000
    const began = this.#now()
    let since = r.since
    for (;;) {
      const remaining = Math.max(0, r.timeoutMs - (this.#now() - began))
      const hold = Math.min(remaining, chunk)
      const result = await this.#capture(
        '/v1/exec/wait',
        scope,
        {
          exec_session_id: r.execSessionId,
          timeout_ms: hold,
          max_output_bytes: r.maxOutputBytes,
          ...(since !== undefined ? { since } : {}),
        },
        { holdMs: hold, idempotent: since !== undefined },
      )
      if (!result.ok) return result
      since ??= result.value.output.from
      const waitedMs = this.#now() - began
      if (result.value.state.status !== 'running' || waitedMs >= r.timeoutMs) {
        const timedOut = result.value.state.status === 'running'
        return { ok: true, value: { ...result.value, wait: { waitedMs, timedOut } } }
      }
    }
  }

  close(scope: SandboxScope, execSessionId: string): Promise<RunnerResult<ExecSnapshot>> {
    return this.#capture(
      '/v1/exec/close',
      scope,
      { exec_session_id: execSessionId },
      { holdMs: 5000 },
    )
  }

  readSpool(scope: SandboxScope, r: { execSessionId: string; offset: number; length: number }) {
    const body = { exec_session_id: r.execSessionId, offset: r.offset, length: r.length }
    return this.#mapped('/v1/exec/read-spool', scope, body, SpoolChunkSchema, READ, (v) => ({
      offset: v.offset,
      bytes: base64Bytes(v.data_base64),
      totalOutputBytes: v.total_output_bytes,
      complete: v.complete,
      eof: v.eof,
    }))
  }

  readFile(
    scope: SandboxScope,
    r: { path: string; startLine?: number; maxLines?: number; maxBytes?: number },
  ) {
    const body = {
      path: r.path,
      ...(r.startLine !== undefined ? { start_line: r.startLine } : {}),
      ...(r.maxLines !== undefined ? { max_lines: r.maxLines } : {}),
      ...(r.maxBytes !== undefined ? { max_bytes: r.maxBytes } : {}),
    }
    return this.#mapped('/v1/files/read', scope, body, FileReadResultSchema, READ, (v) => ({
      path: v.path,
      content: v.content,
      size: v.size,
      startLine: v.start_line,
      endLine: v.end_line,
      totalLines: v.total_lines,
      truncated: v.truncated,
    }))
  }

  writeFile(scope: SandboxScope, r: { path: string; content: string }) {
    return this.#call('/v1/files/write', scope, r, FileWriteResultSchema, {})
  }

  applyPatch(scope: SandboxScope, patch: string) {
    return this.#call('/v1/files/apply-patch', scope, { patch }, PatchResultSchema, {})
  }

  recentCommits(scope: SandboxScope, r: { count: number }) {
    return this.#call('/v1/git/recent-log', scope, r, GitLogResultSchema, READ)
  }

  /** Ending the workspace's commands takes a few seconds at most; removing files, longer. */
  eraseWorkspace(scope: SandboxScope) {
    return this.#call('/v1/workspace/erase', scope, {}, WorkspaceEraseResultSchema, {
      holdMs: 120_000,
      idempotent: true,
    })
  }

  createWorktree(scope: SandboxScope, r: { name: string; ref?: string }) {
    return this.#call('/v1/worktrees', scope, r, WorktreeResultSchema, {
      holdMs: 60_000,
      idempotent: true,
    })
  }

  #capture(
    route: string,
    scope: SandboxScope,
    body: Record<string, unknown>,
    options: CallOptions,
  ): Promise<RunnerResult<ExecSnapshot>> {
    return this.#mapped(route, scope, body, ExecCaptureSchema, options, snapshot)
  }

  /** A call whose answer becomes the port's value through `map` (refusals pass as they are). */
  async #mapped<S extends z.ZodType, T>(
    route: string,
    scope: SandboxScope,
    body: Record<string, unknown>,
    schema: S,
    options: CallOptions,
    map: (answer: z.output<S>) => T,
  ): Promise<RunnerResult<T>> {
    const result = await this.#call(route, scope, body, schema, options)
    return result.ok ? { ok: true, value: map(result.value) } : result
  }

  async #call<S extends z.ZodType>(
    route: string,
    scope: SandboxScope,
    fields: Record<string, unknown>,
    schema: S,
    options: CallOptions,
  ): Promise<RunnerResult<z.output<S>>> {
    const attempts = 1 + (options.idempotent ? (this.options.retries ?? 2) : 0)
    let last: TurnlineError | undefined
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) {
        const pause = backoffMs(attempt - 2, { firstMs: 200, jitter: 'none' })
        await new Promise((resolve) => setTimeout(resolve, pause))
      }
      try {
        return await this.#once(route, scope, fields, schema, options)
      } catch (error) {
        if (!(error instanceof TurnlineError) || !error.retryable) throw error
        last = error
      }
    }
    throw last
  }

  async #once<S extends z.ZodType>(
    route: string,
    scope: SandboxScope,
    fields: Record<string, unknown>,
    schema: S,
    options: CallOptions,
  ): Promise<RunnerResult<z.output<S>>> {
    const text = JSON.stringify({
      tenant: scope.tenant,
      session_id: scope.sessionId,
      nonce: newNonce(),
      ...fields,
    })
    const timeoutMs = (options.holdMs ?? 0) + (this.options.timeoutMs ?? 30_000)
    let response: Response
    let answer: string
    try {
      response = await this.#fetch(`${this.#url().replace(/\/+$/, '')}${route}`, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          ...(await signedHeaders(this.options.secret, text, this.#now())),
        },
        body: text,
        signal: AbortSignal.timeout(timeoutMs),
      })
      answer = await response.text()
    } catch (error) {
      const name = (error as Error).name
      // Turnline's words, the same on every runtime (transport-failure.ts): the message reaches
      // tool outputs and turn warnings, which are stored and sent to the model.
      const why =
        name === 'TimeoutError' || name === 'AbortError'
          ? `no answer within ${timeoutMs} ms`
          : transportFailureText(error)
      throw unavailable(`sandbox runner unreachable (${route}): ${why}`, true, { route }, error)
    }
    return readAnswer(route, response, answer, schema)
  }
}
