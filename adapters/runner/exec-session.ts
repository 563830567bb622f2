import type { ChildProcess } from 'node:child_process'
import { constants } from 'node:os'
import type { ExecCapture } from '../../src/contract/runner-answers.ts'
import { spawnLaunch, watchSandboxInit } from './command-sandbox.ts'
import { headAndTail } from './head-and-tail.ts'
import { childPids, descendant } from './process-tree.ts'
import { Refusal } from './refusal.ts'
import type { Launch } from './sandbox-launch.ts'
import { cappedAppend } from './spool-cap.ts'
import type { SpoolFile } from './spool-file.ts'

/** What a running or finished command is, as kept in memory and in its record. */
export interface ExecInfo {
  id: string
  requestId: string
  toolCallId: string
  command: string
  workdir: string
  backend: 'pipe' | 'pty'
  spoolRel: string
  /** The spool is in the runner's own folder (`private_output`), not the workspace. */
  spoolPrivate?: true
}

export interface SpawnOptions {
  cwd: string
  /** How to start it (sandboxed or not); its `argv` ends with the command line of `argvOf`. */
  launch: Launch
  /** Wall-clock limit: the runner ends the command (and its sandbox) after this long. */
  timeLimitMs?: number
  /** Per-process CPU-time limit, named in the note added when SIGXCPU ended the command. */
  cpuSeconds?: number
  /** Output recorded at most (the spool cap): past it the runner says so and ends the command. */
  spoolLimitBytes?: number
  /** Called once: when all output is in the spool, or `drainGraceMs` after the exit. */
  onSettled: (session: ExecSession) => void
  drainGraceMs?: number
}

/** Milliseconds a wait lingers after the exit for the last output to drain. */
const DRAIN_LINGER_MS = 200
const KILL_GRACE_MS = 2000

/**
 * One command: `sh -c <cmd>` (or under `script` for a PTY) in its own process group, stdout and
 * stderr appended in arrival order to the spool file, which always holds every byte received.
 * Captures read ranges back from the spool (through the runner's own descriptor: spool-file.ts),
 * so memory stays flat whatever the output size.
 */
export class ExecSession {
  state: 'running' | 'exited' | 'lost' = 'running'
  exitCode: number | undefined
  exitedAt: number | undefined
  total = 0
  /** Output offset the next capture starts from (unless told otherwise). */
  cursor = 0
  /** Every byte of output is in the spool and the file is closed. */
  drained = false
  pid: number | undefined
  #child: ChildProcess | undefined
  #groupDepth = 0
  #commandDepth = 0
  /** Host pid of the sandbox's init (bubblewrap reports it): SIGKILL ends the whole sandbox. */
  #sandboxInit: number | undefined
  /** Stops taking output once drained (a command that failed to start). */
  #writable = false
  #forgotten = false
  #listeners = new Set<() => void>()
  #settled = false
  /** Appends to the output, within the spool cap (spawned commands only). */
  #append: (chunk: Buffer) => void = () => {}

  private constructor(
    readonly info: ExecInfo,
    readonly spool: SpoolFile,
  ) {}

  /** A command known only from its record (the runner restarted since). */
  static recorded(
    info: ExecInfo,
    spool: SpoolFile,
    exit: { exitCode?: number; exitedAt?: number; total: number },
  ) {
    const session = new ExecSession(info, spool)
    session.state = exit.exitCode === undefined ? 'lost' : 'exited'
    session.exitCode = exit.exitCode
    session.exitedAt = exit.exitedAt
    session.total = exit.total
    session.drained = true
    session.#settled = true
    return session
  }

  /** The program line of a command: `sh -c`, or under `script` in a pseudo-terminal. */
  static argvOf(command: string, backend: 'pipe' | 'pty'): string[] {
    return backend === 'pty' ? ['script', '-qfec', command, '/dev/null'] : ['sh', '-c', command]
  }

  /** Starts a command writing into `spool` (created and held by the runner). */
  static spawn(info: ExecInfo, spool: SpoolFile, options: SpawnOptions): ExecSession {
    const session = new ExecSession(info, spool)
    session.#writable = true
    session.#groupDepth = options.launch.groupDepth
    session.#commandDepth = options.launch.commandDepth
    const child = spawnLaunch(options.launch, options.cwd)
    session.#child = child
    session.pid = child.pid
    watchSandboxInit(child, options.launch, (pid) => {
      session.#sandboxInit = pid
    })
    const append = cappedAppend(
      options.spoolLimitBytes ?? Number.POSITIVE_INFINITY,
      () => session.total,
      (chunk) => {
        if (!session.#writable) return
        spool.write(chunk, session.total)
        session.total += chunk.byteLength
        session.#notify()
      },
      () => void session.kill(),
    )
    session.#append = append
    child.stdout?.on('data', append)
    child.stderr?.on('data', append)
    child.stdin?.on('error', () => {})
    const settle = () => {
      if (session.#settled) return
      session.#settled = true
      options.onSettled(session)
    }
    child.once('error', (error) => {
      append(Buffer.from(`runner: cannot start the command: ${error.message}\n`))
      session.#exited(127)
      session.#drain()
      settle()
    })
    // The time limit covers the sandbox's whole life, background processes included.
    const limitMs = options.timeLimitMs
    const overTime = (s: number) =>
      `\n[runner] stopped: the command ran longer than the time limit of ${s} s\n`
    const limit =
      limitMs === undefined
        ? undefined
        : setTimeout(
            () => session.drained || void session.kill(overTime(Math.round(limitMs / 1000))),
            limitMs,
          )
    limit?.unref()
    child.once('exit', (code, signal) => {
      const signo = signal ? (constants.signals[signal] ?? 0) : 0
      const status = code ?? 128 + signo
      if (status === 128 + constants.signals.SIGXCPU && options.cpuSeconds !== undefined) {
        const why = `a process used up the CPU-time limit of ${options.cpuSeconds} s`
        append(Buffer.from(`\n[runner] exit ${status} (SIGXCPU): ${why}\n`))
      }
      session.#exited(status)
      setTimeout(settle, options.drainGraceMs ?? 2000).unref()
    })
    child.once('close', () => {
      clearTimeout(limit)
      session.#drain()
      settle()
    })
    return session
  }

  #exited(code: number) {
    if (this.state !== 'running') return
    this.state = 'exited'
    this.exitCode = code
    this.exitedAt = Date.now()
    this.#notify()
  }

  #drain() {
    this.#writable = false
    this.drained = true
    if (this.#forgotten) this.spool.release()
    this.#notify()
  }

  /** Calls `listener` once every byte of output is in the spool (at once if it is). */
  onDrained(listener: () => void): void {
    const check = () => this.drained && this.#listeners.delete(check) && void listener()
    this.#listeners.add(check)
    check()
  }

  /** The runner no longer keeps it in memory: the spool's descriptor closes (once drained). */
  forget(): void {
    this.#forgotten = true
    if (this.drained) this.spool.release()
  }

  #notify() {
    for (const listener of [...this.#listeners]) listener()
  }

  /** Resolves when `done()` holds or after `ms`; true when it was `done()`. */
  #until(done: () => boolean, ms: number): Promise<boolean> {
    if (done()) return Promise.resolve(true)
    return new Promise((resolve) => {
      const finish = (value: boolean) => {
        this.#listeners.delete(check)
        clearTimeout(timer)
        resolve(value)
      }
      const check = () => {
        if (done()) finish(true)
      }
      const timer = setTimeout(() => finish(done()), ms)
      this.#listeners.add(check)
    })
  }

  /** Blocks until the exit (then briefly for the drain) or `ms`; true when it exited. */
  async waitExit(ms: number): Promise<boolean> {
    const exited = await this.#until(() => this.state !== 'running', ms)
    if (exited && !this.drained) await this.#until(() => this.drained, DRAIN_LINGER_MS)
    return exited
  }

  write(chars: string): void {
    const stdin = this.#child?.stdin
    if (this.state !== 'running' || !stdin || stdin.destroyed || stdin.writableEnded) {
      throw new Refusal('conflict', `${this.info.id} does not accept input: its stdin is closed`, {
        state: this.state,
      })
    }
    const eof = this.info.backend === 'pipe' && chars.endsWith('\u0004')
    const text = eof ? chars.slice(0, -1) : chars
    if (text) stdin.write(text)
    if (eof) stdin.end()
  }

  /**
   * Ends the process group: SIGTERM, then SIGKILL if it lingers. In a sandbox, whatever is left
   * once the command has exited (background processes holding its output) ends with it.
   * `note`: why the runner ends it (a limit), added to its output.
   */
  async kill(note?: string): Promise<void> {
    if (this.pid === undefined) return
    if (note !== undefined && !this.drained) this.#append(Buffer.from(note))
    if (this.state !== 'running') {
      this.#endSandbox()
      await this.#until(() => this.drained, KILL_GRACE_MS)
      return
    }
    const pid = this.pid
    const signal = (sig: NodeJS.Signals, groups: number[]) => {
      for (const group of groups) {
        try {
          process.kill(-group, sig)
        } catch {
          // already gone
        }
      }
    }
    // In a sandbox, bwrap's init leads the group of the command (SIGTERM reaches the command,
    // and init, which ignores it, exits when the command does). Under `script` the shell leads
    // its own session: ending it lets `script` exit by itself.
    const group = this.#sandboxInit ?? descendant(pid, this.#groupDepth)
    const command = descendant(pid, this.#commandDepth)
    const shells = command !== undefined && this.info.backend === 'pty' ? childPids(command) : []
    const first = shells.length ? shells : [group ?? pid]
    signal('SIGTERM', first)
    if (!(await this.#until(() => this.state !== 'running', KILL_GRACE_MS))) {
      signal('SIGKILL', [...first, pid])
      this.#endSandbox()
      await this.#until(() => this.state !== 'running', KILL_GRACE_MS)
    }
    if (!(await this.#until(() => this.drained, DRAIN_LINGER_MS))) {
      this.#endSandbox()
      await this.#until(() => this.drained, DRAIN_LINGER_MS)
    }
  }

  /** SIGKILL to the sandbox's init: the kernel ends every process of its PID namespace. */
  #endSandbox(): void {
    // Its init holds the output pipes until it exits, so before the drain the pid is still it.
    if (this.drained || this.#sandboxInit === undefined) return
    try {
      process.kill(this.#sandboxInit, 'SIGKILL')
    } catch {
      // gone already
    }
  }

  /** Output of [from, total): its head and tail, each ≤ maxBytes, cut on UTF-8 boundaries. */
  capture(maxBytes: number, since?: number): ExecCapture['output'] {
    const to = this.total
    const from = Math.min(since ?? this.cursor, to)
    const read = (offset: number, size: number) => this.spool.read(offset, size)
    const output = headAndTail(read, from, to, maxBytes)
    // Moved only once the bytes were read: a refused read leaves them to the next capture.
    this.cursor = Math.max(this.cursor, to)
    return output
  }
}
