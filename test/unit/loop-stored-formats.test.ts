import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { parseLoopState, serializeLoopState } from '../../src/contract/loop-state.ts'
import { LoopStore } from '../../src/core/loops/loop-store.ts'
import { SessionStore } from '../../src/store/session-store.ts'

/**
 * The loop's stored objects, read-only fixtures of each version a store may hold: the state
 * (VT Code's loop state plus Turnline's fields), the create-only pointer naming its workspace,
 * the deployment-wide schedule and run entries the worker's sweep lists, and where a pass
 * stopped in a tenant's entries.
 */
const fixture = (name: string) =>
  new Uint8Array(readFileSync(new URL(`../fixtures/store/loops/${name}`, import.meta.url)))
const text = (name: string) => new TextDecoder().decode(fixture(name))
const CREATED = '2026-01-01T00:00:30.000Z'
const KEYS = {
  'pointer-v1.json': 'acme/.turnline/loops/nightly.json',
  'state-v1.json': 'acme/default/.vtcode/state/loop-nightly.json',
  'schedule-entry-v1.json': '.turnline/schedules/acme/nightly.json',
  'run-entry-v1.json': '.turnline/loop-runs/acme/nightly.json',
  'pass-cursor-v1.json': '.turnline/pass-cursors/schedules/acme.json',
} as const

async function storeOfFixtures(): Promise<LoopStore> {
  const store = new MemoryObjectStore()
  for (const [name, key] of Object.entries(KEYS)) await store.put(key, fixture(name))
  return new LoopStore(new SessionStore({ store }))
}

describe('stored loop formats', () => {
  it('reads a loop through its pointer, and its state keeps every field it was written with', async () => {
    const loops = await storeOfFixtures()
    const { state, key } = await loops.load('acme', 'nightly')
    expect(key).toBe(KEYS['state-v1.json'])
    expect(state).toMatchObject({
      schema_version: 1,
      loop_id: 'nightly',
      workspace: 'default',
      schedule: { cron: '0 3 * * *' },
    })
    // Parsing orders fields as the schema does, so the check is by value, not by bytes.
    expect(JSON.parse(serializeLoopState(state))).toEqual(JSON.parse(text('state-v1.json')))
  })

  it('refuses a state of another schema_version as unsupported, not as corrupt', () => {
    const stored = JSON.parse(text('state-v1.json')) as Record<string, unknown>
    const error = (() => {
      try {
        parseLoopState(JSON.stringify({ ...stored, schema_version: 2 }))
      } catch (caught) {
        return caught
      }
    })()
    expect(isTurnlineError(error, 'unsupported_version')).toBe(true)
  })

  it('lists the schedule and run entries the sweep reads', async () => {
    const loops = await storeOfFixtures()
    expect(await loops.scheduleEntries()).toEqual([{ tenant: 'acme', loopId: 'nightly' }])
    expect(await loops.runEntries()).toEqual([{ tenant: 'acme', loopId: 'nightly' }])
  })

  it('writes entries byte-identical to the fixtures', async () => {
    const store = new MemoryObjectStore()
    const loops = new LoopStore(new SessionStore({ store }))
    await loops.addScheduleEntry('acme', 'nightly', CREATED)
    await loops.addRunEntry('acme', 'nightly', CREATED)
    for (const name of ['schedule-entry-v1.json', 'run-entry-v1.json'] as const) {
      const stored = await store.get(KEYS[name])
      expect(new TextDecoder().decode(stored?.body)).toBe(text(name))
    }
  })

  it('reads where the last pass stopped, writes it byte-identical, and starts over from an unreadable one', async () => {
    const loops = await storeOfFixtures()
    expect(await loops.passCursor('schedules', 'acme')).toBe('nightly')
    expect(await loops.passCursor('loop-runs', 'acme')).toBeUndefined()
    const store = new MemoryObjectStore()
    const written = new LoopStore(new SessionStore({ store }))
    await written.savePassCursor('schedules', 'acme', 'nightly', CREATED)
    const stored = await store.get(KEYS['pass-cursor-v1.json'])
    expect(new TextDecoder().decode(stored?.body)).toBe(text('pass-cursor-v1.json'))
    await store.put(KEYS['pass-cursor-v1.json'], new TextEncoder().encode('{"version":9}'))
    expect(await written.passCursor('schedules', 'acme')).toBeUndefined()
  })
})
