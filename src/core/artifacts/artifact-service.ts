import type {
  ArtifactKind,
  ArtifactView,
  ArtifactWrite,
  MemoryKind,
} from '../../contract/artifacts.ts'
import { isDocumentKind, isMemoryKind } from '../../contract/artifacts.ts'
import { TurnlineError } from '../../contract/errors.ts'
import { HandoffRequestSchema } from '../../contract/handoff.ts'
import { parseHandoffDocument, serializeHandoffDocument } from '../../contract/handoff-document.ts'
import { parseProgressLedger } from '../../contract/progress-ledger.ts'
import { parseContextResetManifest } from '../compaction/context-reset-policy.ts'
import {
  DOCUMENT_LABELS,
  markdownSummary,
  memorySummary,
  truncateText,
} from '../orientation/artifact-summaries.ts'
import { ArtifactStore } from './artifact-store.ts'
import { parseEntries } from './loop-memory.ts'
import { applyProgressUpdate, newLedger, progressSummary } from './progress.ts'

/**
 * Reading and writing artifacts as the HTTP API and the model's tools do: the view of one
 * artifact (raw text, parsed value, one-line summary), a validated write per kind, an append.
 * Notes and decisions are append-only (no replacing PUT); the context reset manifest is written
 * only by a context reset.
 */

const stamp = (epochMs: number) => new Date(epochMs).toISOString()

export async function readArtifact(
  store: ArtifactStore,
  kind: ArtifactKind,
): Promise<ArtifactView> {
  const stored = await store.readText(kind)
  if (!stored) {
    throw new TurnlineError('not_found', `${ArtifactStore.path(kind)} does not exist`)
  }
  const view: ArtifactView = {
    kind,
    path: ArtifactStore.path(kind),
    etag: stored.etag,
    content: stored.text,
  }
  const { value, summary } = interpret(kind, stored.text)
  return {
    ...view,
    ...(value !== undefined ? { value } : {}),
    ...(summary !== undefined ? { summary } : {}),
  }
}

function interpret(kind: ArtifactKind, text: string): { value?: unknown; summary?: string } {
  if (kind === 'progress') {
    const ledger = parseProgressLedger(text)
    return { value: ledger, summary: progressSummary(ledger) }
  }
  if (kind === 'handoff') {
    const document = parseHandoffDocument(text)
    return { value: document, summary: truncateText(document.handoff.state_summary, 280) }
  }
  if (isMemoryKind(kind)) {
    const entries = parseEntries(text)
    const summary = memorySummary(entries)
    return { value: entries, ...(summary !== undefined ? { summary } : {}) }
  }
  if (kind === 'context_reset') {
    const manifest = parseContextResetManifest(text)
    return manifest
      ? {
          value: manifest,
          summary: `Context reset (${manifest.trigger}) at ${manifest.triggered_at}`,
        }
      : {}
  }
  const label = isDocumentKind(kind) ? DOCUMENT_LABELS[kind] : 'Previous Session Summary'
  const summary = markdownSummary(text, label)
  return summary !== undefined ? { summary } : {}
}

export interface WriteContext {
  /** Recorded in the ledger as the updating session ('' for the API). */
  sessionId: string
  now: number
  ifMatch?: string | undefined
}

/** Writes one artifact; answers its view. */
export async function writeArtifact(
  store: ArtifactStore,
  write: ArtifactWrite,
  ctx: WriteContext,
): Promise<ArtifactView & { warnings?: string[] }> {
  const at = stamp(ctx.now)
  if (write.kind === 'progress') {
    const current = await store.readLedger()
    if (ctx.ifMatch !== undefined && current?.etag !== ctx.ifMatch) {
      throw new TurnlineError(
        'conflict',
        `${ArtifactStore.path('progress')} changed: read it again`,
        {
          details: { field: 'header.if-match' },
          retryable: false,
        },
      )
    }
    if (!current && write.update.goal === undefined) {
      throw new TurnlineError('invalid_input', 'a new progress ledger needs a goal', {
        details: { field: 'body.goal' },
      })
    }
    const unknown: string[] = []
    await store.updateLedger((ledger) => {
      const base = ledger ?? newLedger(ctx.sessionId, write.update.goal ?? '', at)
      const applied = applyProgressUpdate(base, write.update, ctx.sessionId, at)
      unknown.splice(0, unknown.length, ...applied.unknownMilestones)
      return applied.ledger
    })
    const view = await readArtifact(store, 'progress')
    return unknown.length
      ? { ...view, warnings: [`unknown milestone ids ignored: ${unknown.join(', ')}`] }
      : view
  }
  if (write.kind === 'handoff') {
    const text = serializeHandoffDocument({
      schema_version: 1,
      ...(ctx.sessionId ? { from_session: ctx.sessionId } : {}),
      created_at: at,
      handoff: HandoffRequestSchema.parse(write.handoff),
    })
    await store.writeText('handoff', text, ctx.ifMatch)
    return readArtifact(store, 'handoff')
  }
  await store.writeText(write.kind, write.content, ctx.ifMatch)
  return readArtifact(store, write.kind)
}

/** Appends one note or decision; answers the file's view. */
export async function appendMemory(
  store: ArtifactStore,
  kind: MemoryKind,
  text: string,
  now: number,
): Promise<ArtifactView> {
  await store.append(kind, text, now)
  return readArtifact(store, kind)
}

export async function deleteArtifact(store: ArtifactStore, kind: ArtifactKind): Promise<void> {
  await store.delete(kind)
}

/** Why a kind cannot be replaced by PUT (undefined = it can). */
export function putRefusal(kind: ArtifactKind): string | undefined {
  if (isMemoryKind(kind)) {
    return `${ArtifactStore.path(kind)} is append-only: POST {"text"} adds an entry`
  }
  if (kind === 'context_reset') {
    return `${ArtifactStore.path(kind)} is written by a context reset (harness.context_reset_mode), not by PUT`
  }
  return undefined
}
