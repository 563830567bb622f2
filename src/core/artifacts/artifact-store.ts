import type { ArtifactEntry, ArtifactKind, MemoryKind } from '../../contract/artifacts.ts'
import { ARTIFACT_KINDS, ARTIFACT_PATHS, MAX_MEMORY_FILE_BYTES } from '../../contract/artifacts.ts'
import { isTurnlineError, TurnlineError } from '../../contract/errors.ts'
import type { ProgressLedger } from '../../contract/progress-ledger.ts'
import { parseProgressLedger, serializeProgressLedger } from '../../contract/progress-ledger.ts'
import type { ObjectStore, StoredObject } from '../../ports/object-store.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import { fromBytes, toBytes } from '../../store/json-bytes.ts'
import { appendEntry } from './loop-memory.ts'

/** Attempts of a read-modify-write before a persistent conflict is reported. */
const CAS_ATTEMPTS = 16

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  json: 'application/json',
  md: 'text/markdown; charset=utf-8',
}

export interface StoredText {
  text: string
  etag: string
}

/**
 * One workspace's artifacts in object storage, below its `.vtcode/` folder. Replacements are
 * plain PUTs (or conditional with `ifMatch`); appends and ledger updates are read-modify-write
 * with If-Match / If-None-Match, retried on a conflict, so concurrent writers never lose one
 * another's entries.
 */
export class ArtifactStore {
  constructor(
    readonly objects: ObjectStore,
    /** `<prefix>/<tenant>/<workspace>/.vtcode/`. */
    readonly root: string,
  ) {}

  key(kind: ArtifactKind): string {
    return `${this.root}${ARTIFACT_PATHS[kind]}`
  }

  /** The artifact's path as the workspace sees it. */
  static path(kind: ArtifactKind): string {
    return `.vtcode/${ARTIFACT_PATHS[kind]}`
  }

  async readText(kind: ArtifactKind): Promise<StoredText | undefined> {
    return this.readKey(this.key(kind))
  }

  async readKey(key: string): Promise<StoredText | undefined> {
    const stored = await this.objects.get(key)
    return stored ? { text: fromBytes(stored.body, key), etag: stored.etag } : undefined
  }

  /** Replaces the artifact; with `ifMatch`, only that version (else 409 conflict). */
  async writeText(kind: ArtifactKind, text: string, ifMatch?: string): Promise<string> {
    return this.writeKey(this.key(kind), text, ifMatch)
  }

  async writeKey(key: string, text: string, ifMatch?: string): Promise<string> {
    const extension = key.slice(key.lastIndexOf('.') + 1)
    try {
      const { etag } = await this.objects.put(key, toBytes(text), {
        contentType: CONTENT_TYPES[extension] ?? 'application/octet-stream',
        ...(ifMatch !== undefined ? { ifMatch } : {}),
      })
      return etag
    } catch (error) {
      if (ifMatch !== undefined && isTurnlineError(error, 'not_found', 'conflict')) {
        throw new TurnlineError(
          'conflict',
          `${key.slice(this.root.length)} changed: read it again`,
          {
            details: { field: 'header.if-match' },
            retryable: false,
          },
        )
      }
      throw error
    }
  }

  async delete(kind: ArtifactKind): Promise<void> {
    await this.objects.delete(this.key(kind))
  }

  /** Appends one entry to notes.md or decisions.md; returns the new file and its etag. */
  async append(kind: MemoryKind, text: string, now: number): Promise<StoredText> {
    return this.modify(this.key(kind), (current) => {
      const next = appendEntry(kind, current ?? '', text, now)
      if (utf8Length(next) > MAX_MEMORY_FILE_BYTES) {
        throw new TurnlineError(
          'payload_too_large',
          `${ArtifactStore.path(kind)} would exceed ${MAX_MEMORY_FILE_BYTES} bytes: archive it (GET) and DELETE it to start a new file`,
          { details: { max_bytes: MAX_MEMORY_FILE_BYTES } },
        )
      }
      return next
    })
  }

  async readLedger(): Promise<{ ledger: ProgressLedger; etag: string } | undefined> {
    const stored = await this.readText('progress')
    return stored ? { ledger: parseProgressLedger(stored.text), etag: stored.etag } : undefined
  }

  /**
   * Read-modify-write of the ledger: `change` gets the current ledger (undefined when none) and
   * returns the next one, or undefined to leave it as it is.
   */
  async updateLedger(
    change: (current: ProgressLedger | undefined) => ProgressLedger | undefined,
  ): Promise<ProgressLedger | undefined> {
    let result: ProgressLedger | undefined
    await this.modify(this.key('progress'), (text) => {
      const next = change(text === undefined ? undefined : parseProgressLedger(text))
      result = next
      return next === undefined ? undefined : serializeProgressLedger(next)
    })
    return result
  }

  /** Which artifacts exist (one LIST per folder of the layout). */
  async list(): Promise<ArtifactEntry[]> {
    const folders = [...new Set(ARTIFACT_KINDS.map((kind) => dirOf(this.key(kind))))]
    const sizes = new Map<string, number>()
    for (const folder of folders) {
      let cursor: string | undefined
      do {
        const page = await this.objects.list(folder, {
          delimiter: '/',
          ...(cursor ? { cursor } : {}),
        })
        for (const object of page.objects) sizes.set(object.key, object.size)
        cursor = page.cursor
      } while (cursor)
    }
    return ARTIFACT_KINDS.map((kind) => {
      const size = sizes.get(this.key(kind))
      return {
        kind,
        path: ArtifactStore.path(kind),
        exists: size !== undefined,
        ...(size !== undefined ? { size } : {}),
      }
    })
  }

  /**
   * Conditional read-modify-write of one object: If-Match on its version, or If-None-Match
   * when it did not exist; a lost race reads again. `change` returning undefined writes nothing.
   */
  private async modify(
    key: string,
    change: (current: string | undefined) => string | undefined,
  ): Promise<StoredText> {
    for (let attempt = 1; attempt <= CAS_ATTEMPTS; attempt++) {
      const stored: StoredObject | null = await this.objects.get(key)
      const current = stored ? fromBytes(stored.body, key) : undefined
      const next = change(current)
      if (next === undefined || next === current) {
        return { text: current ?? '', etag: stored?.etag ?? '' }
      }
      try {
        const { etag } = await this.objects.put(key, toBytes(next), {
          contentType: CONTENT_TYPES[key.slice(key.lastIndexOf('.') + 1)] ?? 'text/plain',
          ...(stored ? { ifMatch: stored.etag } : { ifNoneMatch: '*' as const }),
        })
        return { text: next, etag }
      } catch (error) {
        // Someone else wrote in between (or deleted it): read their version and apply again,
        // after a short random pause so that racing writers spread out.
        if (!isTurnlineError(error, 'conflict', 'not_found')) throw error
        await pause(Math.random() * 20 * attempt)
      }
    }
    throw new TurnlineError('conflict', `${key.slice(this.root.length)} kept changing; retry`)
  }
}

function dirOf(key: string): string {
  return key.slice(0, key.lastIndexOf('/') + 1)
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
