import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { LoopPointer, LoopRunState } from '../../contract/loop-state.ts'
import {
  LOOP_ID,
  LoopPointerSchema,
  PassCursorSchema,
  parseLoopState,
  serializeLoopState,
} from '../../contract/loop-state.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import { fromBytes, toBytes } from '../../store/json-bytes.ts'
import { listAll } from '../../store/list-all.ts'
import { listKeys } from '../../store/list-keys.ts'
import { assertTenant } from '../../store/session-ref.ts'
import type { SessionStore } from '../../store/session-store.ts'
import { type LoopEntryKind, needsEntry } from './loop-entry-need.ts'

export type { LoopEntryKind }

/**
 * Where loops live: the state at the workspace's `.vtcode/state/loop-<id>.json` (replaced with
 * If-Match), and a create-only pointer `<tenant>/.turnline/loops/<id>.json` naming the
 * workspace, so a loop is addressed by id alone and another tenant's loop is simply not found.
 */
export interface StoredLoop {
  state: LoopRunState
  etag: string
  key: string
  tenant: string
}

const ENTRY_FORMATS = {
  schedules: 'turnline.loop-schedule',
  'loop-runs': 'turnline.loop-run-entry',
} as const

export class LoopStore {
  constructor(private readonly sessions: SessionStore) {}

  private get objects(): ObjectStore {
    return this.sessions.objects
  }

  private pointerKey(tenant: string, loopId: string): string {
    assertLoopId(loopId)
    return `${this.sessions.tenantRoot(tenant)}.turnline/loops/${loopId}.json`
  }

  stateKey(tenant: string, workspace: string, loopId: string): string {
    assertLoopId(loopId)
    return `${this.sessions.vtcodeRoot(tenant, workspace)}state/loop-${loopId}.json`
  }

  /** `<prefix>/.turnline/`: the deployment's own folder in the store. */
  private deploymentRoot(): string {
    const head = this.sessions.prefix.replace(/^\/+|\/+$/g, '')
    return `${head ? `${head}/` : ''}.turnline/`
  }

  private entriesRoot(kind: LoopEntryKind): string {
    return `${this.deploymentRoot()}${kind}/`
  }

  /**
   * `<prefix>/.turnline/<kind>/<tenant>/<loop_id>.json`, so one listing of the deployment finds
   * every such loop: `schedules`, a loop with a schedule (create-only; the cron itself is in the
   * loop state); `loop-runs`, a loop whose run was started and may still be running (the run is
   * in the loop state; the sweep drops the entry once it is not), replaced at each start so its
   * `created_at` is the newest run's, for the grace (entry-grace.ts).
   */
  private async addEntry(
    kind: LoopEntryKind,
    tenant: string,
    loopId: string,
    now: string,
  ): Promise<void> {
    assertTenant(tenant)
    assertLoopId(loopId)
    const entry = { format: ENTRY_FORMATS[kind], version: 1, loop_id: loopId, created_at: now }
    try {
      await this.objects.put(
        `${this.entriesRoot(kind)}${tenant}/${loopId}.json`,
        toBytes(JSON.stringify(entry)),
        {
          ...(kind === 'schedules' ? { ifNoneMatch: '*' } : {}),
          contentType: 'application/json',
        },
      )
    } catch (error) {
      if (!isTurnlineError(error, 'conflict')) throw error
    }
  }

  private async entries(kind: LoopEntryKind): Promise<Array<{ tenant: string; loopId: string }>> {
    const root = this.entriesRoot(kind)
    const page = await listAll(this.objects, root)
    return page.objects.flatMap(({ key }) => {
      const match = /^([^/]+)\/([^/]+)\.json$/.exec(key.slice(root.length))
      return match?.[1] && match[2] && LOOP_ID.test(match[2])
        ? [{ tenant: match[1], loopId: match[2] }]
        : []
    })
  }

  removeEntry(kind: LoopEntryKind, tenant: string, loopId: string): Promise<void> {
    assertLoopId(loopId)
    return this.objects.delete(`${this.entriesRoot(kind)}${tenant}/${loopId}.json`)
  }

  /** When `tenant`'s `kind` entry of `loopId` was written (epoch ms); undefined: gone, unreadable. */
  async entryWrittenAt(
    kind: LoopEntryKind,
    tenant: string,
    loopId: string,
  ): Promise<number | undefined> {
    assertTenant(tenant)
    assertLoopId(loopId)
    const stored = await this.objects.get(`${this.entriesRoot(kind)}${tenant}/${loopId}.json`)
    if (!stored) return undefined
    try {
      const at = Date.parse(String(JSON.parse(fromBytes(stored.body, `${kind} entry`)).created_at))
      return Number.isFinite(at) ? at : undefined
    } catch {
      return undefined
    }
  }

  /**
   * Removes an entry its remover read the loop without (or not needing it), then reads the loop
   * again and writes the entry back if the loop needs it now: a delete is not conditional, so it
   * may land after a start (or creation) wrote the entry and saved; with the starter's keepEntry
   * after its save, whichever acts last leaves it (docs/agent-layer.md, loop runs).
   */
  async removeEntryRechecked(kind: LoopEntryKind, tenant: string, loopId: string, now: string) {
    await this.removeEntry(kind, tenant, loopId)
    const loop = await this.load(tenant, loopId).catch((error: unknown) => {
      if (isTurnlineError(error, 'not_found')) return undefined
      throw error
    })
    if (loop && needsEntry(kind, loop.state)) await this.keepEntry(kind, tenant, loopId, now)
  }

  /**
   * A starter's check after its save: writes `tenant`'s `kind` entry of `loopId` again if a pass
   * removed it meanwhile (removeEntryRechecked: the pass checks the other way).
   */
  async keepEntry(kind: LoopEntryKind, tenant: string, loopId: string, now: string) {
    assertTenant(tenant)
    assertLoopId(loopId)
    if (await this.objects.get(`${this.entriesRoot(kind)}${tenant}/${loopId}.json`)) return
    await this.addEntry(kind, tenant, loopId, now)
  }

  addScheduleEntry(tenant: string, loopId: string, now: string): Promise<void> {
    return this.addEntry('schedules', tenant, loopId, now)
  }

  /** Every scheduled loop of the deployment. */
  scheduleEntries(): Promise<Array<{ tenant: string; loopId: string }>> {
    return this.entries('schedules')
  }

  /** The ids of `tenant`'s scheduled loops, listed as far as `upTo`. */
  async scheduledLoopIds(tenant: string, upTo: number): Promise<string[]> {
    assertTenant(tenant)
    const keys = await listKeys(this.objects, `${this.entriesRoot('schedules')}${tenant}/`, upTo)
    return keys.map((key) => key.replace(/\.json$/, ''))
  }

  /** Written before a run is saved, so a run whose first step record a crash lost is found. */
  addRunEntry(tenant: string, loopId: string, now: string): Promise<void> {
    return this.addEntry('loop-runs', tenant, loopId, now)
  }

  /** Every loop whose run may be running. */
  runEntries(): Promise<Array<{ tenant: string; loopId: string }>> {
    return this.entries('loop-runs')
  }

  private cursorKey(kind: LoopEntryKind, tenant: string): string {
    assertTenant(tenant)
    return `${this.deploymentRoot()}pass-cursors/${kind}/${tenant}.json`
  }

  /** The last loop id of `tenant`'s entries a pass took (pass-budget.ts); undefined: none yet. */
  async passCursor(kind: LoopEntryKind, tenant: string): Promise<string | undefined> {
    const key = this.cursorKey(kind, tenant)
    const stored = await this.objects.get(key)
    if (!stored) return undefined
    try {
      return PassCursorSchema.parse(JSON.parse(fromBytes(stored.body, key))).after
    } catch {
      // Only a position: an unreadable one (or another version's) starts from the first entry.
      return undefined
    }
  }

  /** Replaces it (the last writer wins: instances passing together took the same entries). */
  async savePassCursor(kind: LoopEntryKind, tenant: string, after: string, now: string) {
    assertLoopId(after)
    const cursor = { format: 'turnline.pass-cursor', version: 1, after, at: now }
    await this.objects.put(this.cursorKey(kind, tenant), toBytes(JSON.stringify(cursor)), {
      contentType: 'application/json',
    })
  }

  /**
   * A loop's objects outside its workspace — its schedule and run entries, then its pointer —
   * when its workspace is deleted (its state goes with the workspace, after this).
   */
  async forget(tenant: string, loopId: string): Promise<void> {
    await this.removeEntry('schedules', tenant, loopId)
    await this.removeEntry('loop-runs', tenant, loopId)
    await this.objects.delete(this.pointerKey(tenant, loopId))
  }

  /** Creates pointer and state; 409 conflict when the id is taken. */
  async create(tenant: string, state: LoopRunState): Promise<StoredLoop> {
    const pointer: LoopPointer = {
      format: 'turnline.loop-pointer',
      version: 1,
      loop_id: state.loop_id,
      workspace: state.workspace,
      created_at: state.started_at,
    }
    try {
      await this.objects.put(
        this.pointerKey(tenant, state.loop_id),
        toBytes(JSON.stringify(pointer)),
        {
          ifNoneMatch: '*',
          contentType: 'application/json',
        },
      )
    } catch (error) {
      if (!isTurnlineError(error, 'conflict')) throw error
      throw new TurnlineError('conflict', `loop ${state.loop_id} exists already`, {
        retryable: false,
      })
    }
    const key = this.stateKey(tenant, state.workspace, state.loop_id)
    const { etag } = await this.objects.put(key, toBytes(serializeLoopState(state)), {
      ifNoneMatch: '*',
      contentType: 'application/json',
    })
    return { state, etag, key, tenant }
  }

  async load(tenant: string, loopId: string): Promise<StoredLoop> {
    const pointer = await this.objects.get(this.pointerKey(tenant, loopId))
    if (!pointer) throw new TurnlineError('not_found', `loop ${loopId} not found`)
    let workspace: string
    try {
      workspace = LoopPointerSchema.parse(
        JSON.parse(fromBytes(pointer.body, 'loop pointer')),
      ).workspace
    } catch (cause) {
      throw new TurnlineError('corrupt_data', `the pointer of loop ${loopId} is unreadable`, {
        cause,
      })
    }
    const key = this.stateKey(tenant, workspace, loopId)
    const stored = await this.objects.get(key)
    if (!stored) throw new TurnlineError('not_found', `the state of loop ${loopId} is missing`)
    return { state: parseLoopState(fromBytes(stored.body, key)), etag: stored.etag, key, tenant }
  }

  /**
   * Replaces the state if it is still the version read; 409 conflict otherwise. A scheduled loop
   * saved completed or failed gives up its schedule entry then, so its place under
   * TURNLINE_MAX_SCHEDULED_LOOPS frees at once (a crash before that leaves it to the next sweep).
   */
  async save(loop: StoredLoop, state: LoopRunState): Promise<StoredLoop> {
    let etag: string
    try {
      ;({ etag } = await this.objects.put(loop.key, toBytes(serializeLoopState(state)), {
        ifMatch: loop.etag,
        contentType: 'application/json',
      }))
    } catch (error) {
      if (!isTurnlineError(error, 'conflict', 'not_found')) throw error
      throw new TurnlineError('conflict', `loop ${state.loop_id} changed meanwhile; retry`)
    }
    if (state.schedule && (state.status === 'completed' || state.status === 'failed')) {
      await this.removeEntryRechecked('schedules', loop.tenant, state.loop_id, state.updated_at)
    }
    return { state, etag, key: loop.key, tenant: loop.tenant }
  }
}

function assertLoopId(loopId: string): void {
  if (!LOOP_ID.test(loopId)) {
    throw new TurnlineError(
      'invalid_input',
      `loop id ${JSON.stringify(loopId.slice(0, 80))} is not valid: use 1–64 characters from A-Z a-z 0-9 _ -`,
      { details: { field: 'path.id' } },
    )
  }
}
