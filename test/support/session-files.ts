/**
 * Reads a session's folder the way VT Code does — events.jsonl, index/turns.json, manifest.json —
 * and checks it against the committed log: the file parses and holds exactly the committed
 * events (all of them, or the newest ones after the event cap cut old turns), the turn index
 * describes the file, and the manifest counts no event the file does not hold.
 */
import { expect } from 'vitest'
import { parseSessionManifest } from '../../src/contract/session-manifest.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { parseTurnIndex } from '../../src/contract/turn-index.ts'
import type { SessionApi } from '../../src/core/session-api.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'

const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
const isTurnEnd = (type: string) => type === 'turn.completed' || type === 'turn.failed'

/** The session's folder in the store (`…/.vtcode/sessions/<id>/`). */
export async function sessionFolder(store: ObjectStore, sessionId: string): Promise<string> {
  const { objects } = await listAll(store, '')
  const marker = `/.vtcode/sessions/${sessionId}/`
  const key = objects.find((o) => o.key.includes(marker))?.key
  if (!key) throw new Error(`no folder for session ${sessionId}`)
  return key.slice(0, key.indexOf(marker) + marker.length)
}

/**
 * What the folder holds, as VT Code reads it. On a store that cannot append (format 2 manifest)
 * the rolled events are parts (`events/<first>-<end>.jsonl`): their lines from the head on are
 * what events.jsonl would hold, and there is no turn index.
 */
export async function readSessionFiles(store: ObjectStore, sessionId: string) {
  const folder = await sessionFolder(store, sessionId)
  const [stored, storedIndex, storedManifest] = await Promise.all(
    ['events.jsonl', 'index/turns.json', 'manifest.json'].map((name) => store.get(folder + name)),
  )
  const manifest = storedManifest ? parseSessionManifest(storedManifest.body) : undefined
  const parts = manifest?.event_parts
  const events = parts
    ? { body: await joinedParts(store, folder, parts, manifest?.rolled_head_seq ?? 0) }
    : stored
  const index = parts ? null : storedIndex
  if (!events) throw new Error(`session ${sessionId} has no events.jsonl`)
  const text = decode(events.body)
  expect(text.endsWith('\n'), 'events.jsonl ends with a whole line').toBe(true)
  const lines = text.slice(0, -1).split('\n')
  return {
    folder,
    bytes: events.body,
    lines,
    events: lines.map((line) => {
      const parsed = JSON.parse(line) as { schema_version: string; event: ThreadEvent }
      expect(Object.keys(parsed), 'a canonical line').toEqual(['schema_version', 'event'])
      return parsed.event
    }),
    index: index ? parseTurnIndex(index.body) : undefined,
    manifest,
    parts,
  }
}

const pad = (n: number) => String(n).padStart(10, '0')

/** The lines of the parts from `head` on, as one text. */
async function joinedParts(
  store: ObjectStore,
  folder: string,
  parts: readonly (readonly [number, number])[],
  head: number,
): Promise<Uint8Array> {
  const lines: string[] = []
  for (const [first, end] of parts) {
    const part = await store.get(`${folder}events/${pad(first)}-${pad(end)}.jsonl`)
    if (!part) throw new Error(`part ${first}-${end} is missing`)
    const held = decode(part.body).split('\n')
    expect(held.pop(), 'a part ends with a whole line').toBe('')
    expect(held.length, 'a part holds the lines its name says').toBe(end - first)
    lines.push(...held.slice(Math.max(0, head - first)))
  }
  return new TextEncoder().encode(lines.map((line) => `${line}\n`).join(''))
}

/** Checks the folder against `committed` (every event of the session, from seq 0). */
export async function expectFilesMatch(
  store: ObjectStore,
  sessionId: string,
  committed: readonly ThreadEvent[],
  label = sessionId,
): Promise<void> {
  const files = await readSessionFiles(store, sessionId)
  const head = committed.length - files.events.length
  expect(head, `${label}: events.jsonl holds no more than the log`).toBeGreaterThanOrEqual(0)
  expect(files.events, `${label}: events.jsonl holds exactly the committed events`).toEqual(
    committed.slice(head),
  )
  if (files.parts) expect(files.index, `${label}: no turn index beside parts`).toBeUndefined()
  else expect(files.index, `${label}: index/turns.json is there`).toBeDefined()
  const entries = files.index?.entries ?? []
  const expected = files.parts ? [] : turnsOf(files.lines)
  expect(
    entries.map(({ ts: _, ...entry }) => entry),
    `${label}: the turn index describes events.jsonl`,
  ).toEqual(expected.map((entry, i) => ({ ...entry, turn_number: firstTurn(entries) + i })))
  const manifest = files.manifest
  expect(manifest, `${label}: manifest.json is there`).toBeDefined()
  if (!manifest) return
  expect(manifest.rolled_batch, `${label}: the manifest describes events.jsonl`).toBe(
    manifest.last_batch,
  )
  expect(manifest.event_count).toBe(manifest.last_seq + 1 - manifest.rolled_head_seq)
  expect(manifest.rolled_head_seq, `${label}: the manifest's head`).toBeGreaterThanOrEqual(head)
  expect(
    manifest.last_seq + 1,
    `${label}: the manifest counts no event events.jsonl does not hold`,
  ).toBeLessThanOrEqual(committed.length)
  if (head === 0) expect(firstTurn(entries), `${label}: turns count from 1`).toBe(1)
  if (manifest.events_bytes !== undefined && manifest.rolled_head_seq === head) {
    const counted = files.lines.slice(0, manifest.event_count)
    expect(
      decode(files.bytes.subarray(0, manifest.events_bytes)),
      `${label}: the manifest's events_bytes hold the events it counts`,
    ).toBe(counted.length ? `${counted.join('\n')}\n` : '')
  }
}

/** `expectFilesMatch` against what the service reads back as the session's events. */
export async function expectFilesMatchLog(
  store: ObjectStore,
  service: Pick<SessionApi, 'readEvents'>,
  sessionId: string,
  label = sessionId,
  tenant = 't1',
): Promise<void> {
  const page = await service.readEvents(tenant, sessionId, -1, 100_000)
  await expectFilesMatch(
    store,
    sessionId,
    page.events.map((e) => e.line.event as ThreadEvent),
    label,
  )
}

/** The turn index entries (without numbers and timestamps) events.jsonl's lines call for. */
function turnsOf(lines: readonly string[]) {
  const entries: { start_offset: number; end_offset: number; event_count: number }[] = []
  let offset = 0
  let open: { start: number; line: number } | undefined
  lines.forEach((line, i) => {
    const type = (JSON.parse(line) as { event: { type: string } }).event.type
    const end = offset + new TextEncoder().encode(line).length + 1
    if (type === 'turn.started') open = { start: offset, line: i }
    else if (isTurnEnd(type) && open) {
      entries.push({ start_offset: open.start, end_offset: end, event_count: i - open.line + 1 })
      open = undefined
    }
    offset = end
  })
  return entries
}

function firstTurn(entries: readonly { turn_number: number }[]): number {
  return entries[0]?.turn_number ?? 1
}
