import { closeSync, openSync, unlinkSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod'
import { execInfoOf, parseExecRecord, recordedIdentity } from './exec-record.ts'
import { ExecSession } from './exec-session.ts'
import { Refusal } from './refusal.ts'
import { SpoolFile } from './spool-file.ts'
import type { OpenWorkspace } from './workspace-root.ts'
import { at, FOLDER_FLAGS } from './workspace-walk.ts'

/** The runner's own folder beside the workspaces (out of every command's reach). */
export const STATE_FOLDER = '.runner-state'

/**
 * `<root>/.runner-state/<tenant>/<session>`: the runner's bookkeeping of one workspace —
 * `requests/<request_id>.json` (a start's claim, create-exclusive), `exec/<id>.json` (each
 * command's record) and `spools/` (the output of commands started with `private_output`, which
 * no command reaches; each removed when its command is closed, or swept once unclosed past a
 * grace, private-spool-sweep.ts, with the command's claim and record, its request id then noted
 * in `swept.jsonl`, swept-commands.ts). Made on a workspace's first command; erased with the
 * workspace.
 */
export class ExecStateFolder {
  readonly dir: string

  constructor(root: string, tenant: string, session: string) {
    this.dir = path.join(root, STATE_FOLDER, tenant, session)
  }

  async make(): Promise<void> {
    await mkdir(path.join(this.dir, 'requests'), { recursive: true })
    await mkdir(path.join(this.dir, 'exec'), { recursive: true })
    await mkdir(path.join(this.dir, 'spools'), { recursive: true })
  }

  /** `spools/` held open, as a spool's folder (the runner's own: no command reaches it). */
  openSpools(): OpenWorkspace {
    const dir = path.join(this.dir, 'spools')
    const fd = openSync(dir, FOLDER_FLAGS)
    return { fd, path: dir, close: () => closeSync(fd) }
  }

  /**
   * A spool in `spools/` (`private_output`): the runner's file, which the session's other
   * commands can neither read nor rewrite, as they could one in the workspace.
   */
  createPrivateSpool(rel: string): SpoolFile {
    const spools = this.openSpools()
    try {
      return SpoolFile.create(spools, rel, undefined, () => this.openSpools())
    } finally {
      spools.close()
    }
  }

  /**
   * `/v1/exec/close` ended the command and answered its capture: a private spool is removed (its
   * answer is read; it counts in the tenant's disk use until then). Its descriptor closes once
   * the output has drained; later reads of it are refused (`not_found`). A workspace spool stays.
   */
  closed(session: ExecSession): void {
    if (!session.info.spoolPrivate) return
    session.forget()
    const spools = this.openSpools()
    try {
      unlinkSync(at(spools.fd, session.info.spoolRel))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    } finally {
      spools.close()
    }
  }

  claimFile(requestId: string): string {
    return path.join(this.dir, 'requests', `${requestId}.json`)
  }

  /** `spools/<name>`: a private spool's file. */
  privateSpoolFile(name: string): string {
    return path.join(this.dir, 'spools', name)
  }

  recordFile(execSessionId: string): string {
    return path.join(this.dir, 'exec', `${execSessionId}.json`)
  }

  /** The exec session id a claim names; undefined when there is no claim. */
  async claimed(claim: string): Promise<string | undefined> {
    const text = await readFile(claim, 'utf8').catch(() => undefined)
    if (text === undefined) return undefined
    return z.object({ exec_session_id: z.string() }).parse(JSON.parse(text)).exec_session_id
  }

  /**
   * A command known from its record only (the runner restarted, or forgot it), its spool
   * reached again through `reach`; undefined when there is no record.
   */
  async recorded(id: string, reach: () => OpenWorkspace): Promise<ExecSession | undefined> {
    const text = await readFile(this.recordFile(id), 'utf8').catch(() => undefined)
    if (text === undefined) return undefined
    const record = parseExecRecord(text)
    const spoolReach = record.spool_private ? () => this.openSpools() : reach
    const spool = SpoolFile.recorded(record.spool_path, recordedIdentity(record), spoolReach)
    // Running when the runner stopped: the size of the (verified) spool is all there is. Exited
    // while a process it left still wrote (`spool_complete: false`, and the runner stopped before
    // that ended): the spool holds what came after the exit too.
    let total = record.total_output_bytes ?? spool.size()
    if (record.spool_complete === false) total = Math.max(total, sizeIfThere(spool))
    return ExecSession.recorded(execInfoOf(record), spool, {
      exitCode: record.exit_code,
      exitedAt: record.exited_at,
      total,
    })
  }
}

/** The spool's size; 0 when it cannot be read (closed, swept, replaced: reads refuse then). */
function sizeIfThere(spool: SpoolFile): number {
  try {
    return spool.size()
  } catch (error) {
    if (error instanceof Refusal) return 0
    throw error
  }
}
