import { isTurnlineError } from '../../src/contract/errors.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'

/**
 * Checks that a deployment's storage keeps the promises the session log is built on: create-only
 * PUTs (`If-None-Match: *`) refuse an existing key, `If-Match` refuses a stale version, and the
 * coordinator answers. S3-compatible servers differ here (some accept and ignore the headers,
 * which would silently allow two writers to commit the same batch), so run this against a new
 * bucket before trusting it. Everything it writes is under `.turnline/probe/` and deleted.
 */
export interface CheckResult {
  ok: boolean
  lines: string[]
}

type Step = { name: string; run: () => Promise<string> }

const enc = new TextEncoder()
const dec = new TextDecoder()

async function refusal(write: Promise<unknown>): Promise<string | null> {
  try {
    await write
    return null
  } catch (error) {
    if (isTurnlineError(error)) return error.code
    throw error
  }
}

export async function checkStorage(
  store: ObjectStore,
  coordinator: Coordinator,
  id: string = crypto.randomUUID(),
): Promise<CheckResult> {
  const key = `.turnline/probe/${id}.json`
  let first = ''
  const steps: Step[] = [
    {
      name: 'create-only PUT of a new key',
      run: async () => {
        first = (await store.put(key, enc.encode('1'), { ifNoneMatch: '*' })).etag
        return 'written'
      },
    },
    {
      name: 'create-only PUT of an existing key is refused (If-None-Match: *)',
      run: async () => {
        const code = await refusal(store.put(key, enc.encode('2'), { ifNoneMatch: '*' }))
        if (code === 'conflict') return 'refused'
        throw new Error(
          code === null
            ? 'the store accepted it: it ignores If-None-Match, so two writers could both commit one batch'
            : `expected a conflict, got ${code}`,
        )
      },
    },
    {
      name: 'PUT with the current version (If-Match)',
      run: async () => {
        await store.put(key, enc.encode('3'), { ifMatch: first })
        return 'written'
      },
    },
    {
      name: 'PUT with a stale version is refused (If-Match)',
      run: async () => {
        const code = await refusal(store.put(key, enc.encode('4'), { ifMatch: first }))
        if (code === 'conflict') return 'refused'
        throw new Error(
          code === null
            ? 'the store accepted it: it ignores If-Match, so a stale manifest could overwrite a newer one'
            : `expected a conflict, got ${code}`,
        )
      },
    },
    {
      name: 'PUT with If-Match on a missing key is refused',
      run: async () => {
        const code = await refusal(store.put(`${key}.missing`, enc.encode('5'), { ifMatch: first }))
        if (code === 'not_found' || code === 'conflict') return 'refused'
        await store.delete(`${key}.missing`).catch(() => {})
        throw new Error(
          code === null
            ? 'the store wrote it: a rewrite of a deleted object would recreate it (older MinIO releases do this)'
            : `expected not_found, got ${code}`,
        )
      },
    },
    {
      name: 'read back',
      run: async () => {
        const body = (await store.get(key))?.body
        if (body === undefined || dec.decode(body) !== '3') {
          throw new Error(
            `read ${body === undefined ? 'nothing' : `"${dec.decode(body)}"`}, wrote "3"`,
          )
        }
        return 'the last accepted write'
      },
    },
  ]
  const lease: Step = {
    name: 'coordinator lease',
    run: async () => {
      const sessionId = `probe-${id}`
      const begun = await coordinator.beginTurn({ sessionId, tenant: '.probe', leaseMs: 5000 })
      if (begun.status !== 'acquired') throw new Error(`expected a lease, got ${begun.status}`)
      await coordinator.releaseLease(begun.lease)
      return 'taken and released'
    },
  }
  const lines: string[] = []
  const run = async (step: Step): Promise<boolean> => {
    try {
      lines.push(`ok    ${step.name}: ${await step.run()}`)
      return true
    } catch (error) {
      lines.push(`FAIL  ${step.name}: ${error instanceof Error ? error.message : String(error)}`)
      return false
    }
  }
  let ok = true
  // Each storage step builds on the one before: stop at the first failure.
  for (const step of steps) {
    ok = await run(step)
    if (!ok) break
  }
  ok = (await run(lease)) && ok
  await store.delete(key).catch(() => {})
  return { ok, lines }
}
