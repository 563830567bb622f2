import type { FileChange } from '../contract/patch-apply.ts'
/**
 * The sandbox runner: where a session's commands run and its files live. One workspace folder
 * per (tenant, session); every path is relative to it and confined to it.
 *
 * Expected outcomes the model should hear about (an unknown exec session, a path outside the
 * workspace, a patch that does not apply) are `RunnerResult` refusals. Faults throw
 * `TurnlineError`: 'runner_unavailable' (retryable when the runner could not be reached or
 * answered 5xx; not retryable when it rejected our signature), 'payload_too_large'.
 */

export interface SandboxScope {
  tenant: string
  sessionId: string
}

export type RefusalCode =
  | 'invalid_input'
  | 'path_escape'
  | 'not_found'
  | 'conflict'
  | 'patch_failed'
  | 'payload_too_large'

export interface RunnerRefusal {
  code: RefusalCode
  message: string
  details?: Record<string, unknown>
}

export type RunnerResult<T> = { ok: true; value: T } | { ok: false; refusal: RunnerRefusal }

export interface ExecStartRequest {
  /**
   * Deterministic id of the invocation (see `execRequestId`): a start retried with the same id
   * re-attaches to the command it started, never runs it twice.
   */
  requestId: string
  toolCallId: string
  cmd: string
  /** Relative to the workspace. */
  workdir?: string
  tty: boolean
  /** How long to collect output before answering (returns early when the command exits). */
  yieldTimeMs: number
  /** Bytes of head and of tail of the captured output returned at most. */
  maxOutputBytes: number
  /** The session allows network access (the runner's policy decides in the end). */
  network?: boolean
  /**
   * The output spool is kept out of every command's reach (not in the workspace), so the
   * session's other commands can neither read nor rewrite it: a command hook's answer.
   */
  privateOutput?: boolean
}

export interface ExecWriteRequest {
  execSessionId: string
  /** Written to stdin. In pipe mode a trailing U+0004 (Ctrl-D) closes stdin. */
  chars: string
  yieldTimeMs: number
  maxOutputBytes: number
}

export interface ExecPollRequest {
  execSessionId: string
  yieldTimeMs: number
  maxOutputBytes: number
  /** Capture output from this offset instead of from the runner's read cursor. */
  since?: number
}

export interface ExecWaitRequest {
  execSessionId: string
  /** Block until the exit or this long (≤ 3600 s); the deadline never kills the process. */
  timeoutMs: number
  maxOutputBytes: number
  since?: number
}

export type ExecState =
  | { status: 'running'; pid?: number }
  | { status: 'exited'; exitCode: number }
  /** The runner restarted while the command ran: its exit status is unknown. */
  | { status: 'lost' }

/** Output of one capture, offsets [from, to): `head` and, when it did not fit, `tail`. */
export interface OutputCapture {
  from: number
  to: number
  head: string
  tail: string
  omittedBytes: number
}

export interface ExecSnapshot {
  /** Starts with `run-`. */
  execSessionId: string
  requestId: string
  toolCallId: string
  command: string
  workdir: string
  backend: 'pipe' | 'pty'
  state: ExecState
  /** A start that found its request id already running or finished. */
  attached: boolean
  output: OutputCapture
  totalOutputBytes: number
  /** The full output file, relative to the workspace; `complete` once every byte is in it. */
  spool: { path: string; complete: boolean }
  wallTimeMs: number
  /** Wait only. */
  wait?: { waitedMs: number; timedOut: boolean }
}

export interface SpoolChunk {
  offset: number
  bytes: Uint8Array
  totalOutputBytes: number
  complete: boolean
  eof: boolean
}

export interface FileReadRequest {
  path: string
  /** 1-based. */
  startLine?: number
  maxLines?: number
  maxBytes?: number
}

export interface FileContent {
  path: string
  content: string
  size: number
  startLine: number
  endLine: number
  totalLines: number
  truncated: boolean
}

export interface FileWritten {
  path: string
  kind: 'add' | 'update'
  bytes: number
}

export type { FileChange }

export interface Worktree {
  /** Relative to the workspace: `.vtcode/worktrees/<name>`. */
  path: string
  branch: string
  created: boolean
}

/** The workspace's recent commits, read without a process (see `recentCommits`). */
export type RecentCommits =
  | { state: 'log'; log: string }
  | { state: 'none' }
  | { state: 'unknown'; reason: string }

/** What erasing a workspace found (`SandboxRunner.eraseWorkspace`). */
export type WorkspaceErased =
  | { state: 'erased' }
  | { state: 'absent' }
  | { state: 'kept'; reason: string }

export interface SandboxRunner {
  start(scope: SandboxScope, request: ExecStartRequest): Promise<RunnerResult<ExecSnapshot>>
  write(scope: SandboxScope, request: ExecWriteRequest): Promise<RunnerResult<ExecSnapshot>>
  poll(scope: SandboxScope, request: ExecPollRequest): Promise<RunnerResult<ExecSnapshot>>
  wait(scope: SandboxScope, request: ExecWaitRequest): Promise<RunnerResult<ExecSnapshot>>
  /** Ends the command (its whole process group). */
  close(scope: SandboxScope, execSessionId: string): Promise<RunnerResult<ExecSnapshot>>
  readSpool(
    scope: SandboxScope,
    request: { execSessionId: string; offset: number; length: number },
  ): Promise<RunnerResult<SpoolChunk>>
  readFile(scope: SandboxScope, request: FileReadRequest): Promise<RunnerResult<FileContent>>
  writeFile(
    scope: SandboxScope,
    request: { path: string; content: string },
  ): Promise<RunnerResult<FileWritten>>
  /** Applies an `apply_patch` document all-or-nothing. */
  applyPatch(scope: SandboxScope, patch: string): Promise<RunnerResult<{ changes: FileChange[] }>>
  /**
   * What `git log --oneline -<count> --no-decorate` prints in the workspace, read from its `.git`
   * without starting a process; 'unknown' when only git can tell. Optional: without it (or on a
   * refusal, e.g. a runner that has no such route) the caller runs the command.
   */
  recentCommits?(
    scope: SandboxScope,
    request: { count: number },
  ): Promise<RunnerResult<RecentCommits>>
  /**
   * Erases the scope's workspace for good (deleting a session): its commands end, every file
   * goes (symlinks as links, never followed), and the runner's records of it. Idempotent.
   */
  eraseWorkspace(scope: SandboxScope): Promise<RunnerResult<WorkspaceErased>>
  /** A git worktree under `.vtcode/worktrees/<name>` (sub-agents with isolation = "worktree"). */
  createWorktree(
    scope: SandboxScope,
    request: { name: string; ref?: string },
  ): Promise<RunnerResult<Worktree>>
}
