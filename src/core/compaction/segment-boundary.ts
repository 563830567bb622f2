import type { CompactionMode, CompactionTrigger } from '../../contract/enums.ts'
import type { RequestSegment } from '../../contract/request-segment.ts'
import type { ThreadCompactBoundaryEvent } from '../../contract/thread-lifecycle-events.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'

/**
 * Request segments and the `thread.compact_boundary` event. Hashes are SHA-256 (WebCrypto) of the
 * text's UTF-8 bytes followed by one 0xFF byte, truncated to 16 lowercase hex characters — stable
 * across releases and runtimes, unlike VT Code's std hasher — and both `new_*` hashes are filled.
 */

const encoder = new TextEncoder()

/** `segment-%08d`. */
export function segmentId(sequence: number): string {
  return `segment-${String(sequence).padStart(8, '0')}`
}

/**
 * Hashes already computed in this process, by text: every invocation resolves the request segment
 * from the same instructions and tool catalog, so each distinct text is hashed once. Bounded:
 * emptied when full.
 */
const known = new Map<string, Promise<string>>()
const KNOWN_MAX = 256

export function hash16(text: string): Promise<string> {
  let hash = known.get(text)
  if (hash === undefined) {
    if (known.size >= KNOWN_MAX) known.clear()
    hash = digest16(text)
    known.set(text, hash)
    // A failed digest is not remembered.
    hash.catch(() => known.delete(text))
  }
  return hash
}

async function digest16(text: string): Promise<string> {
  const bytes = encoder.encode(text)
  const framed = new Uint8Array(bytes.length + 1)
  framed.set(bytes)
  framed[bytes.length] = 0xff
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', framed))
  let hex = ''
  for (let i = 0; i < 8; i++) hex += (digest[i] as number).toString(16).padStart(2, '0')
  return hex
}

export function prefixHash(systemPrompt: string): Promise<string> {
  return hash16(systemPrompt)
}

/**
 * Over the compact JSON of the definitions in catalog order, each as `{name, description,
 * parameters}` with parameters as given (the bytes the model is sent); undefined without tools.
 */
export async function catalogHash(tools: readonly ToolDefinition[]): Promise<string | undefined> {
  if (tools.length === 0) return undefined
  const jsons = tools.map(definitionJson)
  for (const seen of catalogs) if (sameTexts(seen.jsons, jsons)) return seen.hash
  // Joined once, into a flat string (a template over a joined list is a tree of pieces, which
  // the lookup in `known` would copy into a flat one again).
  const parts = new Array<string>(2 * jsons.length + 1)
  for (let i = 0; i < jsons.length; i++) {
    parts[2 * i] = i === 0 ? '[' : ','
    parts[2 * i + 1] = jsons[i] as string
  }
  parts[2 * jsons.length] = ']'
  const entry = { jsons, hash: hash16(parts.join('')) }
  if (catalogs.length >= CATALOGS_MAX) catalogs.length = 0
  catalogs.push(entry)
  // A failed digest is not remembered.
  entry.hash.catch(() => {
    const at = catalogs.indexOf(entry)
    if (at >= 0) catalogs.splice(at, 1)
  })
  return entry.hash
}

/**
 * Catalogs hashed so far, each as its definitions' JSON texts: every turn resolves its catalog
 * from the same constant definitions (whose texts are the same strings, compared at once) and the
 * few a session declares (new objects every turn, short texts), so comparing the texts one by one
 * finds a catalog seen before without joining and hashing its whole text (≈ 14 KB with the
 * built-in tools) again. The same texts in the same order are the same catalog text, so the
 * same hash. Bounded: emptied when full.
 */
const catalogs: { jsons: readonly string[]; hash: Promise<string> }[] = []
const CATALOGS_MAX = 16

function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/**
 * The compact JSON of each definition hashed so far, by the definition: the built-in tools'
 * definitions are constants, whose schemas are most of a catalog's bytes, so each is written
 * once per process rather than on every invocation. Definitions are never changed once made.
 */
const definitionJsons = new WeakMap<ToolDefinition, string>()

function definitionJson(definition: ToolDefinition): string {
  let json = definitionJsons.get(definition)
  if (json === undefined) {
    const { name, description, parameters } = definition
    json = JSON.stringify({ name, description, parameters })
    definitionJsons.set(definition, json)
  }
  return json
}

export interface SegmentBasis {
  /** The system prompt as sent (instructions plus anything the engine prepends); '' if none. */
  systemPrompt: string
  /** The session instructions alone. */
  instructions: string
  /** Digest of the frozen orientation section the system prompt carries, if any. */
  orientationDigest?: string | undefined
  /** Tool definitions in catalog order (see orderCatalog). */
  tools: readonly ToolDefinition[]
  model: string
  provider: string
  mode: string
}

export async function openSegment(sequence: number, basis: SegmentBasis): Promise<RequestSegment> {
  const catalog = await catalogHash(basis.tools)
  return {
    id: segmentId(sequence),
    sequence,
    prefix_hash: await prefixHash(basis.systemPrompt),
    ...(catalog !== undefined ? { catalog_hash: catalog } : {}),
    instruction_digest: await hash16(basis.instructions),
    ...(basis.orientationDigest !== undefined
      ? { orientation_digest: basis.orientationDigest }
      : {}),
    model: basis.model,
    provider: basis.provider,
    mode: basis.mode,
  }
}

/** Why a new segment opens (VT Code's `SegmentBoundaryReason`), in the order they are checked. */
export type SegmentBoundaryReason =
  | 'compaction'
  | 'recovery'
  | 'model'
  | 'provider'
  | 'mode'
  | 'instructions'
  | 'orientation'
  | 'system_prompt'
  | 'tool_catalog'

export interface SegmentCheck {
  /** The segment in force; undefined for a session's first request. */
  current: RequestSegment | undefined
  /** The segment the next request would need (see openSegment with the same sequence). */
  next: RequestSegment
  /** A compaction (or a recovery compaction) is replacing the history. */
  event?: 'compaction' | 'recovery' | undefined
}

/** The reasons the next request cannot stay in the current segment; empty = stay. */
export function segmentBoundaryReasons(check: SegmentCheck): SegmentBoundaryReason[] {
  const { current, next } = check
  const reasons: SegmentBoundaryReason[] = []
  if (check.event) reasons.push(check.event)
  if (!current) return reasons
  if (current.model !== next.model) reasons.push('model')
  if (current.provider !== next.provider) reasons.push('provider')
  if (current.mode !== next.mode) reasons.push('mode')
  if (current.instruction_digest !== next.instruction_digest) reasons.push('instructions')
  else if (current.orientation_digest !== next.orientation_digest) reasons.push('orientation')
  else if (current.prefix_hash !== next.prefix_hash) reasons.push('system_prompt')
  if (current.catalog_hash !== next.catalog_hash) reasons.push('tool_catalog')
  return reasons
}

/**
 * The segment for the next request: the current one when nothing changed, else a new one with the
 * next sequence number (the first segment of a session is `segment-00000001`).
 */
export async function resolveSegment(
  current: RequestSegment | undefined,
  basis: SegmentBasis,
  event?: 'compaction' | 'recovery',
): Promise<{ segment: RequestSegment; opened: boolean; reasons: SegmentBoundaryReason[] }> {
  const sequence = current ? current.sequence + 1 : 1
  const next = await openSegment(sequence, basis)
  const reasons = segmentBoundaryReasons({ current, next, event })
  if (current && reasons.length === 0) return { segment: current, opened: false, reasons }
  return { segment: next, opened: true, reasons }
}

export interface CompactBoundaryInput {
  threadId: string
  trigger: CompactionTrigger
  mode: CompactionMode
  /** Messages before compaction, a prior envelope message excluded. */
  originalMessageCount: number
  compactedMessageCount: number
  historyArtifactPath?: string | undefined
  previous?: RequestSegment | undefined
  next: RequestSegment
}

/** The `thread.compact_boundary` event, fields in wire order, absent ones omitted. */
export function compactBoundaryEvent(input: CompactBoundaryInput): ThreadCompactBoundaryEvent {
  const { previous, next } = input
  return {
    type: 'thread.compact_boundary',
    thread_id: input.threadId,
    trigger: input.trigger,
    mode: input.mode,
    original_message_count: input.originalMessageCount,
    compacted_message_count: input.compactedMessageCount,
    ...(input.historyArtifactPath !== undefined
      ? { history_artifact_path: input.historyArtifactPath }
      : {}),
    ...(previous ? { previous_segment_id: previous.id } : {}),
    new_segment_id: next.id,
    ...(previous ? { previous_prefix_hash: previous.prefix_hash } : {}),
    new_prefix_hash: next.prefix_hash,
    ...(previous?.catalog_hash !== undefined
      ? { previous_catalog_hash: previous.catalog_hash }
      : {}),
    ...(next.catalog_hash !== undefined ? { new_catalog_hash: next.catalog_hash } : {}),
  }
}
