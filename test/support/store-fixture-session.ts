import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { startScriptedEngine } from './scripted-engine.ts'

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

/**
 * A memory store holding a stored-session fixture (a folder of objects by key, read-only), the
 * fixture's objects by key, and the id of its one session (tenant `t1`).
 */
export async function fixtureSession(root: string) {
  const store = new MemoryObjectStore()
  const files = new Map<string, Uint8Array>()
  for (const path of filesUnder(root)) {
    const body = new Uint8Array(readFileSync(path))
    files.set(relative(root, path), body)
    await store.put(relative(root, path), body.slice())
  }
  const pointer = [...files.keys()].find((key) => key.startsWith('t1/.turnline/sessions/'))
  const stored = files.get(pointer ?? '') ?? new TextEncoder().encode('{}')
  const sessionId = JSON.parse(new TextDecoder().decode(stored)).session_id as string
  return { store, files, sessionId }
}

/**
 * Continues the fixture session `sessionId` in `store` with tool turns `from`…`to` (each calls
 * `lookup`, which answers `answer of turn <n> zzz…`, then answers `done <n>`); returns the engine.
 */
export async function continueWithToolTurns(
  store: MemoryObjectStore,
  sessionId: string,
  from: number,
  to: number,
) {
  const engine = startScriptedEngine({ store })
  let turn = from
  engine.receiver.setReply(() => ({ body: `answer of turn ${turn} ${'z'.repeat(200)}` }))
  engine.model.respond((request) => {
    const messages = request.messages as { role: string }[]
    if (messages.at(-1)?.role !== 'user') return { text: `done ${turn}` }
    const args = JSON.stringify({ q: `turn ${turn}` })
    return { toolCalls: [{ id: `call_${turn}`, name: 'lookup', arguments: args }] }
  })
  for (; turn <= to; turn++) {
    const result = await engine.service.stepTurn('t1', sessionId, { input: `task ${turn}` })
    if (result.status !== 'completed') throw new Error(`turn ${turn} ended ${result.status}`)
  }
  return engine
}

/**
 * One turn `task <n>` of the session in a new process (a cold read of everything stored), which
 * answers `done <n>`; returns the model request it made (JSON of its messages) and the engine.
 */
export async function coldTurn(store: MemoryObjectStore, sessionId: string, n: number) {
  const cold = startScriptedEngine({ store })
  cold.model.enqueue({ text: `done ${n}` })
  const result = await cold.service.stepTurn('t1', sessionId, { input: `task ${n}` })
  if (result.status !== 'completed') throw new Error(`turn ${n} ended ${result.status}`)
  return { request: JSON.stringify(cold.model.requests[0]?.messages), service: cold.service }
}
