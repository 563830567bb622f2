import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { MemoryEnvelope } from '../../contract/memory-envelope.ts'
import {
  memoryEnvelopePath,
  parseMemoryEnvelope,
  serializeMemoryEnvelope,
} from '../../contract/memory-envelope.ts'
import type { ObjectStore } from '../../ports/object-store.ts'
import type { ContextResetManifest } from './context-reset-policy.ts'
import { renderContextResetManifest } from './context-reset-policy.ts'

/**
 * What a compaction leaves in the session folder, next to the log: the archived history
 * (`history/<session>_<turn:04>_<YYYYMMDDTHHMMSSZ>.jsonl`, one message per line, create-only) and
 * its memory envelope (`<same stem>.memory.json`, create-only); and the context reset manifest
 * (`tasks/current_context_reset.md`, replaced by each reset, deleted when consumed).
 */

const encoder = new TextEncoder()
const decoder = new TextDecoder()
/** Names tried when a stem is taken (two compactions of one turn within a second). */
const MAX_NAME_ATTEMPTS = 8

export function compactStamp(epochMs: number): string {
  return new Date(epochMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')
}

export interface CompactionArtifacts {
  historyPath: string
  envelopePath: string
  envelope: MemoryEnvelope
}

/**
 * Archives `source` under a fresh name, then writes the envelope `build` makes for that name.
 * Both writes are create-only: an artifact is never replaced.
 */
export async function persistCompactionArtifacts(
  objects: ObjectStore,
  root: string,
  input: { sessionId: string; turn: number; now: number; source: readonly HistoryMessage[] },
  build: (historyPath: string) => MemoryEnvelope,
): Promise<CompactionArtifacts> {
  const stem = `${root}history/${input.sessionId}_${String(input.turn).padStart(4, '0')}_${compactStamp(input.now)}`
  const body = encoder.encode(
    input.source.map((message) => `${JSON.stringify(message)}\n`).join(''),
  )
  for (let attempt = 1; attempt <= MAX_NAME_ATTEMPTS; attempt++) {
    const historyPath = `${stem}${attempt === 1 ? '' : `-${attempt}`}.jsonl`
    if (!(await createOnly(objects, historyPath, body, 'application/x-ndjson'))) continue
    const envelope = build(historyPath)
    const envelopePath = memoryEnvelopePath(historyPath)
    const json = encoder.encode(serializeMemoryEnvelope(envelope))
    if (!(await createOnly(objects, envelopePath, json, 'application/json'))) {
      throw new TurnlineError('conflict', `memory envelope ${envelopePath} exists already`)
    }
    return { historyPath, envelopePath, envelope }
  }
  throw new TurnlineError('conflict', `no free history artifact name for ${stem}`)
}

async function createOnly(
  objects: ObjectStore,
  key: string,
  body: Uint8Array,
  contentType: string,
): Promise<boolean> {
  try {
    await objects.put(key, body, { ifNoneMatch: '*', contentType })
    return true
  } catch (error) {
    if (isTurnlineError(error, 'conflict')) return false
    throw error
  }
}

/** The envelope at `key`; undefined when it is missing or unreadable (reported via `onError`). */
export async function readMemoryEnvelope(
  objects: ObjectStore,
  key: string,
  onError: (error: unknown) => void,
): Promise<MemoryEnvelope | undefined> {
  try {
    const stored = await objects.get(key)
    return stored ? parseMemoryEnvelope(stored.body) : undefined
  } catch (error) {
    onError(error)
    return undefined
  }
}

export function resetManifestKey(root: string): string {
  return `${root}tasks/current_context_reset.md`
}

export async function writeResetManifest(
  objects: ObjectStore,
  root: string,
  manifest: ContextResetManifest,
): Promise<string> {
  const key = resetManifestKey(root)
  await objects.put(key, encoder.encode(renderContextResetManifest(manifest)), {
    contentType: 'text/markdown; charset=utf-8',
  })
  return key
}

export async function readText(objects: ObjectStore, key: string): Promise<string | undefined> {
  const stored = await objects.get(key)
  return stored ? decoder.decode(stored.body) : undefined
}
