import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseSessionManifest } from '../../src/contract/session-manifest.ts'
import { readSessionEvents } from '../../src/core/session/read-session-events.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { engineDeps } from '../support/engine-deps.ts'
import { ScriptedModelClient } from '../support/scripted-model.ts'

/**
 * A loop's `last_artifact_path` names an object that exists and holds the last step's events,
 * on a store that appends (as fs: `events.jsonl`) and on one that cannot (as S3: the session's
 * `manifest.json`, whose event parts hold them).
 */
describe.each([
  { store: 'one that appends (fs)', appendable: true, file: 'events.jsonl' },
  { store: 'one that cannot append (S3)', appendable: false, file: 'manifest.json' },
])("a loop's last_artifact_path on $store", ({ appendable, file }) => {
  it(`names the step session's ${file}, which holds its events`, async () => {
    const store = new MemoryObjectStore({ appendable })
    const model = new ScriptedModelClient()
    const deps = engineDeps({ store, model, fetch: globalThis.fetch }, [])
    const sessions = new SessionStore({ store })
    const service = new SessionService({ ...deps, sessions })
    await service.createLoop('t1', { loop_id: 'tidy', task: 'Tidy one file.' })
    model.enqueue({ text: 'tidied' })
    const { loop } = await service.stepLoop('t1', 'tidy', {})
    expect(loop.last_artifact_path).toBe(`.vtcode/sessions/tidy-step-0/${file}`)

    const ref = { tenant: 't1', workspace: loop.workspace, sessionId: 'tidy-step-0' }
    const keys = new SessionKeys('', ref)
    // Relative to the workspace folder, `<tenant>/<workspace>/` (no prefix here).
    const object = await store.get(`t1/${loop.workspace}/${loop.last_artifact_path}`)
    expect(keys.root.startsWith(`t1/${loop.workspace}/.vtcode/sessions/`)).toBe(true)
    if (!object) throw new Error(`${loop.last_artifact_path} is not stored`)
    // The canonical lines of every event of the step's session, from thread.started on.
    const events = await readSessionEvents({ ...deps, sessions }, ref)
    expect(events.at(-1)?.type).toBe('thread.completed')
    const lines = appendable
      ? new TextDecoder().decode(object.body)
      : await partsText(store, keys, object.body)
    expect(
      lines
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).event),
    ).toEqual(JSON.parse(JSON.stringify(events)))
  })
})

/** The events a format-2 manifest's parts hold, from its head on (what events.jsonl would). */
async function partsText(
  store: MemoryObjectStore,
  keys: SessionKeys,
  body: Uint8Array,
): Promise<string> {
  const manifest = parseSessionManifest(body)
  expect(manifest.event_parts?.length).toBeGreaterThan(0)
  expect(manifest.rolled_head_seq ?? 0).toBe(0)
  let text = ''
  for (const [first, end] of manifest.event_parts ?? []) {
    const part = await store.get(keys.eventPart(first, end))
    text += new TextDecoder().decode(part?.body)
  }
  return text
}
