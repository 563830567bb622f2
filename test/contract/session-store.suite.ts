import { describe, expect, it } from 'vitest'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { parseVersionedLine } from '../../src/contract/serialize.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import type { SessionRef } from '../../src/store/session-ref.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { crashingObjectStore, SimulatedCrash } from '../support/crashing-object-store.ts'
import { threadCompleted, threadStarted, turnEvents } from '../support/sample-events.ts'
import { expectFilesMatch, readSessionFiles } from '../support/session-files.ts'

type MakeStore = () => Promise<{ store: ObjectStore; cleanup: () => Promise<void> }>

let counter = 0
const newRef = (): SessionRef => ({
  tenant: 'acme',
  workspace: 'ws-1',
  sessionId: `s-${Date.now().toString(36)}-${counter++}`,
})

/** Runs `turns` ordinary turns and thread.completed through one writer, returning what it committed. */
async function runSession(sessions: SessionStore, ref: SessionRef, turns: number) {
  const committed: ThreadEvent[] = [threadStarted(ref.sessionId)]
  await sessions.create(ref, ref.sessionId, { events: [threadStarted(ref.sessionId)] })
  for (let n = 1; n <= turns; n++) {
    const snapshot = await sessions.open(ref)
    const events = turnEvents(n)
    await sessions.commit(snapshot, {
      events,
      history: { append: [{ role: 'user', content: `u${n}` }] },
    })
    committed.push(...events)
  }
  const done = threadCompleted(ref.sessionId, turns)
  await sessions.commit(await sessions.open(ref), { events: [done] })
  committed.push(done)
  return committed
}

async function allEvents(sessions: SessionStore, ref: SessionRef) {
  const out: { seq: number; event: unknown }[] = []
  let from = 0
  for (;;) {
    const page = await sessions.readEvents(ref, from, 7)
    out.push(...page.events.map((e) => ({ seq: e.seq, event: e.line.event })))
    if (page.complete) return out
    from = page.nextSeq
  }
}

export function describeSessionStore(name: string, makeStore: MakeStore): void {
  describe(`SessionStore on ${name}`, () => {
    it('keeps VT Code’s files current: appended after every commit, or lagging less than a checkpoint interval', async () => {
      const { store, cleanup } = await makeStore()
      try {
        const checkpointEvery = 4
        const sessions = new SessionStore({ store, checkpointEvery })
        const ref = newRef()
        const committed: ThreadEvent[] = [threadStarted(ref.sessionId)]
        await sessions.create(ref, ref.sessionId, { events: [threadStarted(ref.sessionId)] })
        // turns split over two commits, as a tool turn is: started + item, then item + end
        for (let n = 1; n <= 10; n++) {
          const [started, ...rest] = turnEvents(n, 2) as [ThreadEvent, ...ThreadEvent[]]
          for (const events of [[started, rest[0] as ThreadEvent], rest.slice(1)]) {
            const { snapshot } = await sessions.commit(await sessions.open(ref), { events })
            committed.push(...events)
            const files = await readSessionFiles(store, ref.sessionId)
            const manifest = files.manifest
            // the stored manifest counts only events the file holds, and describes it
            expect(manifest?.rolled_batch).toBe(manifest?.last_batch)
            expect(files.events.slice(0, manifest?.event_count)).toEqual(
              committed.slice(0, manifest?.event_count),
            )
            if (store.append) {
              // appended after every commit
              await expectFilesMatch(store, ref.sessionId, committed, `turn ${n}`)
            } else {
              // the bound: the file holds every batch but fewer than `checkpointEvery` last ones
              const behind = snapshot.lastBatch - (manifest?.rolled_batch ?? -1)
              expect(behind, `turn ${n}`).toBeLessThan(checkpointEvery)
              expect(files.events).toEqual(committed.slice(0, files.events.length))
            }
          }
        }
        const done = threadCompleted(ref.sessionId, 10)
        await sessions.commit(await sessions.open(ref), { events: [done] })
        await expectFilesMatch(store, ref.sessionId, [...committed, done], 'completed')
      } finally {
        await cleanup()
      }
    })

    it('commits turns as dense batches and serves every event from any seq', async () => {
      const { store, cleanup } = await makeStore()
      try {
        const sessions = new SessionStore({ store, checkpointEvery: 4 })
        const ref = newRef()
        const committed = await runSession(sessions, ref, 12)
        const read = await allEvents(sessions, ref)
        expect(read.map((e) => e.seq)).toEqual(committed.map((_, i) => i))
        expect(read.map((e) => e.event)).toEqual(committed)
        for (const from of [0, 1, 5, 17, 30, committed.length - 1]) {
          const page = await sessions.readEvents(ref, from, 3)
          expect(page.events[0]?.seq).toBe(from)
          expect(page.events[0]?.line.event).toEqual(committed[from])
        }
        // events.jsonl (or its parts) is complete and canonical once thread.completed is committed
        const { lines } = await readSessionFiles(store, ref.sessionId)
        expect(lines.map((l) => parseVersionedLine(l).event)).toEqual(committed)
        const manifest = await sessions.manifest(ref)
        expect(manifest).toMatchObject({
          status: 'completed',
          turn_count: 12,
          event_count: committed.length,
          last_seq: committed.length - 1,
          rolled_through: committed.length,
        })
        await expect(
          sessions.commit(await sessions.open(ref), { events: turnEvents(99) }),
        ).rejects.toMatchObject({ code: 'session_completed' })
      } finally {
        await cleanup()
      }
    })

    it('lets exactly one of 20 racing writers commit the same batch; losers leave no trace', async () => {
      const { store, cleanup } = await makeStore()
      try {
        const ref = newRef()
        const setup = new SessionStore({ store })
        await setup.create(ref, ref.sessionId, { events: [threadStarted(ref.sessionId)] })
        const writers = Array.from({ length: 20 }, () => new SessionStore({ store, cacheSize: 0 }))
        const snapshots = await Promise.all(writers.map((w) => w.open(ref)))
        const results = await Promise.allSettled(
          writers.map((w, i) => w.commit(snapshots[i]!, { events: turnEvents(i) })),
        )
        const won = results.filter((r) => r.status === 'fulfilled')
        const lost = results.filter((r) => r.status === 'rejected')
        expect(won).toHaveLength(1)
        expect(lost).toHaveLength(19)
        for (const r of lost) expect(isTurnlineError(r.reason, 'conflict')).toBe(true)
        const winner = results.findIndex((r) => r.status === 'fulfilled')
        const read = await allEvents(new SessionStore({ store }), ref)
        expect(read.map((e) => e.event)).toEqual([
          threadStarted(ref.sessionId),
          ...turnEvents(winner),
        ])
        const logKeys = (await setup.keysOf(ref)).filter((k) => k.includes('/log/'))
        expect(logKeys).toHaveLength(2)
      } finally {
        await cleanup()
      }
    })

    it('survives a writer stopped between any two object writes', async () => {
      const { store, cleanup } = await makeStore()
      try {
        // Count the writes of a clean run to know every crash point.
        const counted = countingObjectStore(store)
        await runSession(
          new SessionStore({ store: counted.store, checkpointEvery: 2 }),
          newRef(),
          5,
        )
        // every put and, on a store that appends, every append to events.jsonl
        const puts = counted.counts.put + counted.counts.append
        expect(puts).toBeGreaterThan(10)

        for (const mode of ['before', 'after', 'torn'] as const) {
          for (let crashAt = 1; crashAt <= puts; crashAt++) {
            const ref = newRef()
            const dying = crashingObjectStore(store, crashAt, mode)
            const landed = await runUntilCrash(
              new SessionStore({ store: dying.store, checkpointEvery: 2 }),
              ref,
              5,
            )
            // A fresh writer continues from whatever landed.
            const next = new SessionStore({ store, checkpointEvery: 2 })
            let expected = landed
            if (landed.length === 0) {
              await next.create(ref, ref.sessionId, { events: [threadStarted(ref.sessionId)] })
              expected = [threadStarted(ref.sessionId)]
            }
            const more = turnEvents(100)
            await next.commit(await next.open(ref), { events: more })
            const done = threadCompleted(ref.sessionId, 6)
            await next.commit(await next.open(ref), { events: [done] })
            expected = [...expected, ...more, done]
            const read = await allEvents(new SessionStore({ store }), ref)
            expect(
              read.map((e) => e.seq),
              `${mode} put #${crashAt}`,
            ).toEqual(expected.map((_, i) => i))
            expect(
              read.map((e) => e.event),
              `${mode} put #${crashAt}`,
            ).toEqual(expected)
            const { lines } = await readSessionFiles(store, ref.sessionId)
            expect(
              lines.map((l) => parseVersionedLine(l).event),
              `${mode} put #${crashAt}`,
            ).toEqual(expected)
            const manifest = await new SessionStore({ store }).manifest(ref)
            expect(manifest.last_seq).toBe(expected.length - 1)
            expect(manifest.status).toBe('completed')
          }
        }
      } finally {
        await cleanup()
      }
    }, 120_000) // dozens of crash points, each a fresh writer: ~10 s on S3 alone, more on a loaded machine
  })
}

/** Runs a session until the simulated crash; returns the events whose batches landed. */
async function runUntilCrash(sessions: SessionStore, ref: SessionRef, turns: number) {
  const landed: ThreadEvent[] = []
  const attempt = async (events: ThreadEvent[], first: boolean) => {
    try {
      const result = first
        ? await sessions.create(ref, ref.sessionId, { events: events as [ThreadEvent] })
        : await sessions.commit(await sessions.open(ref), { events })
      landed.push(...events)
      return !(result.maintenanceError instanceof SimulatedCrash)
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error
      if (error.message.startsWith('crash after') && error.message.includes('/log/'))
        landed.push(...events)
      return false
    }
  }
  if (!(await attempt([threadStarted(ref.sessionId)], true))) return landed
  for (let n = 1; n <= turns; n++) if (!(await attempt(turnEvents(n), false))) return landed
  return landed
}
