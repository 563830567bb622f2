import { createHash, randomBytes } from 'node:crypto'
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod'
import type { UidRange } from './sandbox-settings.ts'

/** `<state>/tenant-uids/<tenant>.json`: the uid (and equal gid) a tenant's commands run as. */
export const TenantUidRecordSchema = z.object({
  version: z.literal(1),
  tenant: z.string(),
  uid: z.number().int().positive(),
})
export type TenantUidRecord = z.infer<typeof TenantUidRecordSchema>

/**
 * One uid per tenant from a configured range (TURNLINE_SANDBOX_TENANT_UIDS), kept in the runner's
 * state so a tenant keeps its uid across restarts. A uid is claimed with a create-exclusive file
 * (`uid-<n>`) before the tenant's record names it, so two runners on one root never hand one uid
 * to two tenants. Its own uid keeps one tenant's processes off another's files and lets the kernel
 * count all of a tenant's processes against one RLIMIT_NPROC.
 */
export class TenantUids {
  readonly #known = new Map<string, Promise<number>>()
  readonly #dir: string

  constructor(
    stateDir: string,
    private readonly range: UidRange,
  ) {
    this.#dir = path.join(stateDir, 'tenant-uids')
  }

  uidOf(tenant: string): Promise<number> {
    let uid = this.#known.get(tenant)
    if (!uid) {
      uid = this.#load(tenant)
      this.#known.set(tenant, uid)
      uid.catch(() => this.#known.delete(tenant))
    }
    return uid
  }

  async #load(tenant: string): Promise<number> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 })
    const file = path.join(this.#dir, `${tenant}.json`)
    const existing = await readRecord(file)
    if (existing !== undefined) return existing
    const size = this.range.last - this.range.first + 1
    // Start where the tenant's name hashes to: usually the first try is free.
    const start = createHash('sha256').update(tenant).digest().readUInt32BE(0) % size
    for (let i = 0; i < Math.min(size, 100_000); i++) {
      const uid = this.range.first + ((start + i) % size)
      try {
        await writeFile(path.join(this.#dir, `uid-${uid}`), tenant, { flag: 'wx' })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue
        throw error
      }
      const record: TenantUidRecord = { version: 1, tenant, uid }
      // Written whole, then linked into place: a reader never sees half a record.
      const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`
      await writeFile(temp, JSON.stringify(record), { flag: 'wx' })
      try {
        await link(temp, file)
        return uid
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        // Another runner on this root gave the tenant a uid meanwhile: that one holds.
        const raced = await readRecord(file)
        if (raced !== undefined) return raced
        throw error
      } finally {
        await rm(temp, { force: true })
      }
    }
    throw new Error(
      `no free uid left in TURNLINE_SANDBOX_TENANT_UIDS (${this.range.first}-${this.range.last})`,
    )
  }
}

async function readRecord(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => undefined)
  if (text === undefined) return undefined
  return TenantUidRecordSchema.parse(JSON.parse(text)).uid
}
