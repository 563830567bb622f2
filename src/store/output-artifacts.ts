import { isTurnlineError, TurnlineError } from '../contract/errors.ts'
import {
  OUTPUT_ARTIFACT_VERSION,
  OUTPUT_CHUNK_BYTES,
  type OutputArtifact,
  OutputArtifactSchema,
} from '../contract/output-artifact.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { sha256Hex } from '../shared/sha256-hex.ts'
import { fromBytes, toBytes } from './json-bytes.ts'
import { listAll } from './list-all.ts'
import { putOnce } from './put-once.ts'

/** A stored descriptor: corrupt_data when it is not one, unsupported_version when newer. */
export function parseOutputArtifact(body: Uint8Array, id: string): OutputArtifact {
  let value: unknown
  try {
    value = JSON.parse(fromBytes(body, `output artifact ${id}`))
  } catch (cause) {
    if (isTurnlineError(cause)) throw cause
    throw new TurnlineError('corrupt_data', `output artifact ${id} is not JSON`, { cause })
  }
  const version = (value as { version?: unknown } | null)?.version
  if (typeof version === 'number' && version > OUTPUT_ARTIFACT_VERSION) {
    throw new TurnlineError(
      'unsupported_version',
      `output artifact ${id} has version ${version}; this build reads ${OUTPUT_ARTIFACT_VERSION}`,
    )
  }
  const parsed = OutputArtifactSchema.safeParse(value)
  if (!parsed.success || parsed.data.id !== id) {
    throw new TurnlineError('corrupt_data', `output artifact ${id} is not a valid descriptor`)
  }
  return parsed.data
}

/**
 * Streams one output into the store: bytes are buffered up to one chunk, each full chunk is
 * written (content-addressed, create-only) before more is taken, so at most one chunk is held.
 */
export class OutputArtifactWriter {
  private buffer = new Uint8Array(OUTPUT_CHUNK_BYTES)
  private filled = 0
  private size = 0
  private newlines = 0
  private lastByte = -1
  private readonly chunks: OutputArtifact['chunks'] = []
  /** Keys of the chunks this writer made (not found already there). */
  private readonly made: string[] = []

  /**
   * `folder`: the session's `outputs/`, ending in '/' (chunks go in its `chunks/`);
   * `descriptors`: where the descriptor goes (OutputArtifacts says which).
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly folder: string,
    private readonly descriptors: string = folder,
  ) {}

  /** Bytes taken so far. */
  get written(): number {
    return this.size
  }

  async write(bytes: Uint8Array): Promise<void> {
    let at = 0
    while (at < bytes.byteLength) {
      const take = Math.min(bytes.byteLength - at, OUTPUT_CHUNK_BYTES - this.filled)
      const part = bytes.subarray(at, at + take)
      this.buffer.set(part, this.filled)
      for (const byte of part) if (byte === 10) this.newlines++
      this.filled += take
      this.size += take
      at += take
      if (this.filled === OUTPUT_CHUNK_BYTES) await this.flush()
    }
    if (bytes.byteLength > 0) this.lastByte = bytes[bytes.byteLength - 1] ?? -1
  }

  /** Writes the last chunk and the descriptor; answers the artifact. */
  async finish(): Promise<OutputArtifact> {
    await this.flush()
    const listing = this.chunks.map((c) => `${c.sha256}:${c.size}`).join('\n')
    const id = `out_${(await sha256Hex(new TextEncoder().encode(listing))).slice(0, 32)}`
    const artifact: OutputArtifact = {
      version: OUTPUT_ARTIFACT_VERSION,
      id,
      size: this.size,
      lines: this.newlines + (this.size > 0 && this.lastByte !== 10 ? 1 : 0),
      chunk_bytes: OUTPUT_CHUNK_BYTES,
      chunks: this.chunks,
    }
    await putOnce(this.store, `${this.descriptors}${id}.json`, toBytes(JSON.stringify(artifact)))
    return artifact
  }

  private async flush(): Promise<void> {
    if (this.filled === 0) return
    const body = this.buffer.slice(0, this.filled)
    const sha256 = await sha256Hex(body)
    const key = `${this.folder}chunks/${sha256}`
    if (await putOnce(this.store, key, body)) this.made.push(key)
    this.chunks.push({ sha256, size: body.byteLength })
    this.filled = 0
  }

  /**
   * Gives up an output that is not kept (over a cap): deletes the chunks this writer made, so
   * nothing of it stays stored; chunks it found already there belong to other outputs. No
   * descriptor was written, so no artifact ever named them.
   */
  async discard(): Promise<void> {
    this.filled = 0
    await Promise.all(this.made.splice(0).map((key) => this.store.delete(key)))
  }
}

/** One output artifact and a reader of its bytes [start, end). */
export interface OutputArtifactRead {
  artifact: OutputArtifact
  read(start: number, end: number): AsyncIterable<Uint8Array>
}

/**
 * A session's output artifacts (`<session>/outputs/`): written by tools whose answers exceed
 * the inline limit (and by hooks), read by the model's `read_tool_output` and by
 * `GET …/artifacts/{id}`.
 *
 * What the model may read is where the descriptor is: `outputs/<id>.json` for an output named to
 * the model (a tool output or input whose preview names it, a hook deny whose reason names it),
 * `outputs/hidden/<id>.json` for one kept for the operators only (a hook's answer). Both are
 * create-only and immutable; the chunks are shared. An id is a hash of the content, so anyone
 * can compute the id of a guess: the model's reads look only at the first folder, so a hidden
 * answer reads as an unknown id. Naming a hidden artifact to the model (`showToModel`) writes
 * its descriptor into the first folder too.
 */
export class OutputArtifacts {
  /** `folder`: the session's `outputs/`, ending in '/'. */
  private readonly folder: string

  /**
   * `sessionRoot`: the session's root key, ending in '/'. `hiddenFromModel`: what this instance
   * writes is kept for the operators only (hooks' answers), not named to the model.
   */
  constructor(
    private readonly store: ObjectStore,
    private readonly sessionRoot: string,
    private readonly hiddenFromModel = false,
  ) {
    this.folder = `${sessionRoot}outputs/`
  }

  /** The same artifacts, written hidden from the model (hooks' answers). */
  hidden(): OutputArtifacts {
    return new OutputArtifacts(this.store, this.sessionRoot, true)
  }

  writer(): OutputArtifactWriter {
    const descriptors = this.hiddenFromModel ? this.hiddenFolder : this.folder
    return new OutputArtifactWriter(this.store, this.folder, descriptors)
  }

  private get hiddenFolder(): string {
    return `${this.folder}hidden/`
  }

  /** Bytes of every object the session's artifacts hold (chunks and descriptors). */
  async storedBytes(): Promise<number> {
    const { objects } = await listAll(this.store, this.folder)
    return objects.reduce((sum, object) => sum + object.size, 0)
  }

  /**
   * The artifact's descriptor, named to the model or hidden from it (what the operators read);
   * null when the session has no such artifact.
   */
  async describe(id: string): Promise<OutputArtifact | null> {
    return (await this.describeForModel(id)) ?? (await this.descriptorIn(this.hiddenFolder, id))
  }

  /**
   * The artifact's descriptor when it was named to the model (what `read_tool_output` serves);
   * null for one hidden from it, as for an id the session does not have.
   */
  async describeForModel(id: string): Promise<OutputArtifact | null> {
    return this.descriptorIn(this.folder, id)
  }

  /**
   * Names a hidden artifact to the model (a hook deny whose reason names its kept answer): its
   * descriptor is written where the model's reads find it (create-only; once is enough). False
   * when the session has no such artifact.
   */
  async showToModel(id: string): Promise<boolean> {
    if (await this.describeForModel(id)) return true
    const artifact = await this.descriptorIn(this.hiddenFolder, id)
    if (!artifact) return false
    await putOnce(this.store, `${this.folder}${id}.json`, toBytes(JSON.stringify(artifact)))
    return true
  }

  private async descriptorIn(folder: string, id: string): Promise<OutputArtifact | null> {
    if (!/^out_[0-9a-f]{32}$/.test(id)) return null
    const stored = await this.store.get(`${folder}${id}.json`)
    return stored ? parseOutputArtifact(stored.body, id) : null
  }

  /** The artifact with a reader of its bytes; TurnlineError('not_found') when there is none. */
  async open(id: string): Promise<OutputArtifactRead> {
    const artifact = await this.describe(id)
    if (!artifact) {
      throw new TurnlineError('not_found', `no output artifact ${id.slice(0, 80)} in this session`)
    }
    return { artifact, read: (start, end) => this.read(artifact, start, end) }
  }
  /** Bytes [start, end) of the artifact, chunk by chunk (only the chunks that overlap). */
  async *read(
    artifact: OutputArtifact,
    start = 0,
    end = artifact.size,
  ): AsyncGenerator<Uint8Array> {
    let chunkStart = 0
    for (const chunk of artifact.chunks) {
      const chunkEnd = chunkStart + chunk.size
      if (chunkEnd > start && chunkStart < end) {
        const stored = await this.store.get(`${this.folder}chunks/${chunk.sha256}`)
        if (!stored || stored.body.byteLength !== chunk.size) {
          throw new TurnlineError('corrupt_data', `output artifact ${artifact.id} lost a chunk`)
        }
        yield stored.body.subarray(
          Math.max(0, start - chunkStart),
          Math.min(chunk.size, end - chunkStart),
        )
      }
      chunkStart = chunkEnd
      if (chunkStart >= end) return
    }
  }
}
