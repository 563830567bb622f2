import { randomBytes } from 'node:crypto'
import { rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { ExecStartBody } from '../../src/contract/runner-requests.ts'
import { commandEnv } from './command-env.ts'
import type { CommandNetworks } from './command-networks.ts'
import { CommandRecords } from './command-records.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import { execRecordText, saveExecRecord } from './exec-record.ts'
import { type ExecInfo, ExecSession } from './exec-session.ts'
import { ExecStateFolder } from './exec-state-folder.ts'
import { HeldSpools } from './held-spools.ts'
import type { PrivateSpoolIndex, SpoolOf } from './private-spool-index.ts'
import { Refusal } from './refusal.ts'
import { sameCommand } from './same-command.ts'
import { SpoolFile } from './spool-file.ts'
import { refuseSwept } from './swept-commands.ts'
import type { TenantLimitEnforcer } from './tenant-limit-enforcer.ts'
import { openFolder, refusingRaces } from './workspace-files.ts'
import { WorkspaceGate } from './workspace-gate.ts'
import { normalRel } from './workspace-paths.ts'
import type { OpenWorkspace, WorkspaceRoot } from './workspace-root.ts'
import { at, HeldFds } from './workspace-walk.ts'

export interface Scope {
  tenant: string
  sessionId: string
  /** The session workspace, held open for this request only (its `fd` closes with it). */
  workspace: OpenWorkspace
  /** The tenant's sandbox: its user and limits (tenant-limit-enforcer.ts). */
  sandbox: CommandSandbox
}

/** Called once per command when it has exited and its output has drained (or the grace ran out). */
export type ExitListener = (scope: Scope, session: ExecSession) => void

/**
 * Every command of every workspace. Starts are idempotent by request id: the claim is a
 * create-exclusive file under `<root>/.runner-state/<tenant>/<session>/requests/`, so a start
 * retried — even after the runner restarted — finds the command it began instead of running it
 * again. A record per command (`exec/<id>.json`) remembers its exit for later lookups.
 */
export class ExecRegistry {
  readonly #live = new Map<string, ExecSession>()
  readonly #holding = new HeldSpools()

  constructor(
    private readonly root: string,
    private readonly workspaces: WorkspaceRoot,
    private readonly limits: TenantLimitEnforcer,
    private readonly networks: Pick<CommandNetworks, 'open'>,
    private readonly onExit: ExitListener,
    /** The private spools there are: each added once created, dropped once closed. */
    private readonly spools: PrivateSpoolIndex,
  ) {}

  #state = (scope: Scope) => new ExecStateFolder(this.root, scope.tenant, scope.sessionId)
  #key = (scope: Scope, id: string) => `${scope.tenant}/${scope.sessionId}/${id}`

  /** Starts of this process still under way, by request: a concurrent retry joins them. */
  readonly #starting = new Map<string, Promise<{ session: ExecSession; attached: boolean }>>()
  readonly #erasing = new WorkspaceGate()
  /** Records being written of commands that have settled. */
  readonly #records = new CommandRecords()

  async start(
    scope: Scope,
    body: ExecStartBody,
  ): Promise<{ session: ExecSession; attached: boolean }> {
    this.#erasing.admit(`${scope.tenant}/${scope.sessionId}`)
    const key = this.#key(scope, body.request_id)
    const under = this.#starting.get(key)
    if (under) {
      const { session } = await under
      sameCommand(session, body)
      return { session, attached: true }
    }
    const run = this.#start(scope, body)
    this.#starting.set(key, run)
    try {
      return await run
    } finally {
      this.#starting.delete(key)
    }
  }

  async #start(
    scope: Scope,
    body: ExecStartBody,
  ): Promise<{ session: ExecSession; attached: boolean }> {
    const network = scope.sandbox.network(body.network)
    const state = this.#state(scope)
    await state.make()
    const claim = state.claimFile(body.request_id)
    const existing = await this.#attach(scope, claim, body)
    if (existing) return { session: existing, attached: true }

    const release = await this.limits.admitCommand(scope.tenant, scope.sandbox)
    // The working folder stays open until the command has started (see #spawn).
    const held = new HeldFds()
    try {
      const rel = body.workdir ?? '.'
      const workdir = refusingRaces(rel, () => openFolder(scope.workspace, rel, held))
      const missing = `workdir ${JSON.stringify(normalRel(rel))} is not a directory`
      if (!workdir) throw new Refusal('not_found', missing)
      const folder = { ...workdir, rel: normalRel(rel) }
      return await this.#spawn(scope, body, claim, folder, network, release)
    } catch (error) {
      release()
      throw error
    } finally {
      held.closeAll()
    }
  }

  async #spawn(
    scope: Scope,
    body: ExecStartBody,
    claim: string,
    workdir: { fd: number; resolved: string; rel: string },
    network: boolean,
    release: () => void,
  ): Promise<{ session: ExecSession; attached: boolean }> {
    const sandbox = scope.sandbox
    const id = `run-${randomBytes(12).toString('hex')}`
    const spoolPrivate = body.private_output === true
    const spoolRel = `${spoolPrivate ? '' : '.vtcode/context/tool_outputs/'}write_stdin_${id}.txt`
    const spool = spoolPrivate
      ? this.#state(scope).createPrivateSpool(spoolRel)
      : SpoolFile.create(scope.workspace, spoolRel, sandbox.fileOwner, () =>
          this.workspaces.open(scope.tenant, scope.sessionId),
        )
    if (spoolPrivate) this.spools.add({ tenant: scope.tenant, session: scope.sessionId, id })
    const exec: ExecInfo = {
      id,
      requestId: body.request_id,
      toolCallId: body.tool_call_id,
      command: body.cmd,
      workdir: workdir.rel,
      backend: body.tty ? 'pty' : 'pipe',
      spoolRel,
      ...(spoolPrivate ? { spoolPrivate: true as const } : {}),
    }
    const started = Date.now()
    const record = this.#state(scope).recordFile(id)
    // The spool, then the record (with the spool's identity), then the claim: whoever holds a
    // claim has its record on disk.
    try {
      await saveExecRecord(record, execRecordText(exec, spool, started))
      await writeFile(claim, JSON.stringify({ exec_session_id: id }), { flag: 'wx' })
    } catch (error) {
      release()
      spool.release()
      await rm(record, { force: true })
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const raced = await this.#attach(scope, claim, body)
      if (raced) return { session: raced, attached: true }
      throw error
    }
    // Inside the sandbox, bubblewrap changes into the folder (its own mounts: a symlink there
    // reaches only what the sandbox sees); the host side starts in "/". Unsandboxed, the command
    // starts in the folder the runner holds open, reached through its descriptor.
    const cwd = path.posix.join(scope.workspace.path, workdir.resolved)
    const env = commandEnv({
      workspace: scope.workspace.path,
      cwd,
      tty: body.tty,
      execSessionId: id,
      passEnv: sandbox.settings.passEnv,
      source: process.env,
    })
    // A socket of its own on the egress proxy, ended once the command has settled.
    const egress = network ? await this.networks.open(scope, id) : undefined
    let session: ExecSession
    try {
      const launch = sandbox.launch({
        argv: ExecSession.argvOf(body.cmd, exec.backend),
        workspace: scope.workspace.path,
        cwd,
        env,
        network: egress?.network ?? false,
      })
      session = ExecSession.spawn(exec, spool, {
        cwd: sandbox.sandboxed ? '/' : at(workdir.fd, '.'),
        launch,
        timeLimitMs: sandbox.timeLimitMs,
        ...(sandbox.status.limits ? { cpuSeconds: sandbox.status.limits.cpuSeconds } : {}),
        spoolLimitBytes: sandbox.settings.limits.spoolMb * 1024 * 1024,
        onSettled: (s) => {
          release()
          this.limits.settled(scope.tenant, s)
          void egress?.close()
          const save = () => saveExecRecord(record, execRecordText(exec, spool, started, s))
          this.#records.settled(this.#key(scope, id), s, save, () => this.onExit(scope, s))
          this.#holding.hold(s)
          this.#forgetLater(scope, id, s)
        },
      })
    } catch (error) {
      await egress?.close()
      throw error
    }
    this.#live.set(this.#key(scope, id), session)
    if (!session.drained) this.limits.watch(scope.tenant, sandbox, session)
    return { session, attached: false }
  }

  /** Out of memory after a while (held-spools.ts); its record answers for it from then on. */
  #forgetLater(scope: Scope, id: string, session: ExecSession) {
    const key = this.#key(scope, id)
    this.#holding.forgetLater(
      session,
      () => this.#live.get(key) === session && this.#live.delete(key),
    )
  }

  async #attach(
    scope: Scope,
    claim: string,
    body: ExecStartBody,
  ): Promise<ExecSession | undefined> {
    const id = await this.#state(scope).claimed(claim)
    if (id === undefined) return void (await refuseSwept(this.#state(scope), body))
    const session = await this.get(scope, id)
    sameCommand(session, body)
    return session
  }

  /** A command of this workspace, live or from its record. */
  async get(scope: Scope, id: string): Promise<ExecSession> {
    const live = this.#live.get(this.#key(scope, id))
    if (live) return live
    const session = await this.#state(scope).recorded(id, () =>
      this.workspaces.open(scope.tenant, scope.sessionId),
    )
    if (!session) {
      throw new Refusal('not_found', `no exec session ${id} in this workspace`, {
        exec_session_id: id,
      })
    }
    this.#live.set(this.#key(scope, id), session)
    this.#forgetLater(scope, id, session)
    return session
  }

  /** Closed, its capture answered: a private spool goes (exec-state-folder.ts). */
  closed = (scope: Scope, session: ExecSession) => {
    this.#state(scope).closed(session)
    if (!session.info.spoolPrivate) return
    this.spools.drop({ tenant: scope.tenant, session: scope.sessionId, id: session.info.id })
    this.limits.remeasure(scope.tenant)
  }

  /** Private spools whose output this runner still takes, or whose record it still writes. */
  writing = () =>
    new Set(
      [...this.#live]
        .filter(([k, s]) => s.info.spoolPrivate && (!s.drained || this.#records.rewriting(k)))
        .map(([k]) => k),
    )

  /** The sweep removed a spool: its descriptor closes, the tenant's disk use is measured anew. */
  swept = ({ tenant, session, id }: SpoolOf) => {
    this.#live.get(`${tenant}/${session}/${id}`)?.forget()
    this.limits.remeasure(tenant)
  }

  /**
   * Before a workspace is erased (workspace-eraser.ts): no start there until `reopen`; starts
   * under way finish, then every command of it ends (its whole sandbox), its record is written
   * and it is forgotten, its spool's descriptor closed (an open one keeps the file's blocks).
   */
  async endAll(tenant: string, session: string): Promise<void> {
    const workspace = `${tenant}/${session}`
    this.#erasing.close(workspace)
    const mine = <T>(map: Map<string, T>) =>
      [...map].filter(([key]) => key.startsWith(`${workspace}/`))
    await Promise.allSettled(mine(this.#starting).map(([, run]) => run))
    const commands = mine(this.#live)
    await Promise.all(commands.map(([, s]) => s.kill()))
    await Promise.allSettled(this.#records.under(`${workspace}/`))
    for (const [key, s] of commands) {
      this.#live.delete(key)
      this.#holding.drop(s)
      s.forget()
      s.spool.release()
    }
  }

  /** The erase of `endAll` is over: commands may start in the (new) workspace again. */
  reopen(tenant: string, session: string): void {
    this.#erasing.reopen(`${tenant}/${session}`)
  }

  /** Ends every running command (runner shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#live.values()].map((s) => s.kill()))
  }
}
