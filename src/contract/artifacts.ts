import * as z from 'zod'
import { type HandoffRequest, HandoffRequestSchema } from './handoff.ts'
import { lazySchema } from './lazy-schema.ts'
import { type ProgressUpdate, ProgressUpdateSchema } from './progress-ledger.ts'

/**
 * Durable workspace artifacts: what a fresh agent orients from (VT Code's orient phase). They
 * live in the workspace's `.vtcode/` folder of object storage, next to `sessions/`, at the paths
 * VT Code uses where it names one (`tasks/current_*.md`, `state/notes.md`, `state/decisions.md`,
 * `tasks/current_context_reset.md`); see docs/agent-layer.md for the rest.
 */

export const DOCUMENT_KINDS = [
  'spec',
  'contract',
  'sprint_contract',
  'evaluation',
  'outcome_verification',
  'feature_list',
] as const
export type DocumentKind = (typeof DOCUMENT_KINDS)[number]

export const MEMORY_KINDS = ['notes', 'decisions'] as const
export type MemoryKind = (typeof MEMORY_KINDS)[number]

export const ARTIFACT_KINDS = [
  'progress',
  ...DOCUMENT_KINDS,
  ...MEMORY_KINDS,
  'handoff',
  'compaction_summary',
  'context_reset',
] as const
export const ArtifactKindSchema = lazySchema(() => z.enum(ARTIFACT_KINDS))
export type ArtifactKind = z.infer<typeof ArtifactKindSchema>

/** Path of each artifact below the workspace's `.vtcode/` folder. */
export const ARTIFACT_PATHS: Readonly<Record<ArtifactKind, string>> = {
  progress: 'state/progress.json',
  spec: 'tasks/current_spec.md',
  contract: 'tasks/current_contract.md',
  sprint_contract: 'tasks/current_sprint_contract.md',
  evaluation: 'tasks/current_evaluation.md',
  outcome_verification: 'tasks/current_outcome_verification.md',
  feature_list: 'tasks/current_feature_list.md',
  notes: 'state/notes.md',
  decisions: 'state/decisions.md',
  handoff: 'tasks/current_handoff.json',
  compaction_summary: 'memories/compaction_summary.md',
  context_reset: 'tasks/current_context_reset.md',
}

/** Markdown documents a caller uploads or the agent writes (and the compaction summary). */
export function isDocumentKind(kind: ArtifactKind): kind is DocumentKind {
  return (DOCUMENT_KINDS as readonly string[]).includes(kind)
}

export function isMemoryKind(kind: ArtifactKind): kind is MemoryKind {
  return (MEMORY_KINDS as readonly string[]).includes(kind)
}

/** Bytes a markdown document may have. */
export const MAX_DOCUMENT_BYTES = 256 * 1024
/** Bytes one note or decision may have. */
export const MAX_MEMORY_ENTRY_BYTES = 8 * 1024
/** Bytes `notes.md` or `decisions.md` may grow to (append-only: archive and delete by hand). */
export const MAX_MEMORY_FILE_BYTES = 4 * 1024 * 1024

/** `PUT …/artifacts/{document kind or compaction_summary}`. */
export const DocumentBodySchema = lazySchema(() =>
  z.strictObject({
    content: z.string().max(MAX_DOCUMENT_BYTES).describe('The whole document (markdown).'),
  }),
)
export type DocumentBody = z.infer<typeof DocumentBodySchema>

/** `POST …/artifacts/notes` and `…/decisions`: one append. */
export const MemoryAppendSchema = lazySchema(() =>
  z.strictObject({
    text: z
      .string()
      .max(MAX_MEMORY_ENTRY_BYTES)
      .refine((text) => text.trim() !== '', 'must not be empty')
      .describe('The entry; stored as one `- [<time>] <text>` line.'),
  }),
)
export type MemoryAppend = z.infer<typeof MemoryAppendSchema>

/** One `- [<RFC 3339>] <text>` line of notes.md or decisions.md. */
export interface MemoryEntry {
  at: string
  text: string
}

/** Where an artifact is and whether it exists. */
export interface ArtifactEntry {
  kind: ArtifactKind
  /** Relative to the workspace: `.vtcode/…`. */
  path: string
  exists: boolean
  size?: number
}

/** What `GET …/artifacts/{kind}` answers. */
export interface ArtifactView {
  kind: ArtifactKind
  path: string
  /** Opaque version; send it back as `If-Match` to replace only this version. */
  etag: string
  /** The raw text of the object (markdown, or JSON for progress and handoff). */
  content: string
  /** Parsed form: the ledger, the handoff, or the memory entries. */
  value?: unknown
  /** One-line orientation summary of the artifact. */
  summary?: string
}

/** A validated write of one artifact (the body schema depends on the kind). */
export type ArtifactWrite =
  | { kind: DocumentKind | 'compaction_summary'; content: string }
  | { kind: 'progress'; update: ProgressUpdate }
  | { kind: 'handoff'; handoff: HandoffRequest }

/** The body schema `PUT …/artifacts/{kind}` takes, or undefined when the kind is not replaced. */
export function artifactPutSchema(kind: ArtifactKind): z.ZodType | undefined {
  if (isDocumentKind(kind) || kind === 'compaction_summary') return DocumentBodySchema
  if (kind === 'progress') return ProgressUpdateSchema
  if (kind === 'handoff') return HandoffRequestSchema
  return undefined
}

/** What `PUT …/artifacts/{kind}` accepts over all kinds (each kind takes one of these). */
export const ArtifactPutBodySchema = lazySchema(() =>
  z
    .union([DocumentBodySchema, ProgressUpdateSchema, HandoffRequestSchema])
    .describe(
      '`{content}` for a document or `compaction_summary`; a progress update (fields given replace, others kept) for `progress`; a HandoffRequest for `handoff`.',
    ),
)

/** Arguments of the model's artifact tools (src/core/artifacts/artifact-tools.ts). */
export const MemoryToolArgsSchema = lazySchema(() => z.object({ text: z.string().min(1) }))
export const WriteArtifactArgsSchema = lazySchema(() =>
  z.object({
    kind: z.enum(DOCUMENT_KINDS),
    content: z.string().max(MAX_DOCUMENT_BYTES),
  }),
)
export const ReadArtifactArgsSchema = lazySchema(() => z.object({ kind: ArtifactKindSchema }))
export const UpdateProgressArgsSchema = lazySchema(() =>
  ProgressUpdateSchema.omit({
    stalled: true,
    git_checkpoint: true,
  }),
)
