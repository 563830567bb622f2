import { TurnlineError } from '../contract/errors.ts'
import type { HistoryMessage } from '../contract/history-message.ts'
import {
  dataImage,
  dataUrlOf,
  type ImageRef,
  parseStoredImage,
  STORED_IMAGE_FORMAT,
  STORED_IMAGE_VERSION,
  type StoredImage,
  type StoredUserImage,
} from '../contract/stored-image.ts'
import type { UserImage } from '../contract/turn-input.ts'
import {
  KEPT_FOLLOW_UP_INPUT_VERSION,
  KEPT_TURN_INPUT_VERSION,
  type ReadableTurnInput,
  STORED_TURN_INPUT_VERSION,
  type TurnInputRecord,
  type TurnInputRecordV2,
  type TurnInputRecordV3,
  type TurnInputRecordV4,
} from '../contract/turn-input-record.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { base64Bytes } from '../shared/base64.ts'
import { sha256Hex } from '../shared/sha256-hex.ts'
import { fromBytes, toBytes } from './json-bytes.ts'
import { putOnce } from './put-once.ts'
import { hasFiles, SessionFiles } from './session-files.ts'

type AnyImage = UserImage | StoredUserImage

/** A turn input record as it is written: version 2, 3 or 4. */
type StoredInputRecord = TurnInputRecordV2 | TurnInputRecordV3 | TurnInputRecordV4

/**
 * The images of a session's user messages, kept once each in its folder (`images/<sha256>.json`,
 * format `turnline.image`, src/contract/stored-image.ts) rather than inline in every batch and
 * checkpoint that carries the transcript: a `data:` image is stored when the batch that first
 * holds it is committed (`stashMessages`, `stashInput`), and named there by reference; it is
 * loaded again for each model request (`loadMessages`), for a fork or a response seeded with the
 * transcript, and for the turns listing (`loadInput`). `https:` images stay URLs. The messages'
 * documents (`files`) go the same way, through session-files.ts.
 */
export class SessionImages {
  private readonly folder: string
  /** The messages' documents (`files`), stored and loaded alongside their images. */
  private readonly files: SessionFiles
  /** Loaded images by SHA-256, for the requests of one invocation. */
  private readonly loaded = new Map<string, Promise<string>>()

  /** `sessionRoot`: the session's root key, ending in '/'. */
  constructor(
    private readonly store: ObjectStore,
    sessionRoot: string,
  ) {
    this.folder = `${sessionRoot}images/`
    this.files = new SessionFiles(store, sessionRoot)
  }

  /** Stores a `data:` image (create-only; the same bytes are one object); undefined for a URL. */
  async stash(url: string): Promise<ImageRef | undefined> {
    const data = dataImage(url)
    if (!data) return undefined
    const bytes = base64Bytes(data.base64)
    const sha256 = await sha256Hex(bytes)
    const image: StoredImage = {
      format: STORED_IMAGE_FORMAT,
      version: STORED_IMAGE_VERSION,
      sha256,
      media_type: data.mediaType,
      size: bytes.byteLength,
      data: data.base64,
    }
    await putOnce(this.store, `${this.folder}${sha256}.json`, toBytes(JSON.stringify(image)))
    return { sha256, media_type: image.media_type, size: image.size }
  }

  /** The messages with their `data:` images stored and named by reference. */
  async stashMessages(messages: HistoryMessage[]): Promise<HistoryMessage[]> {
    if (!messages.some((m) => hasInline(m) || hasFiles(m, 'inline'))) return messages
    return Promise.all(
      messages.map(async (message) => {
        if (message.role !== 'user') return message
        const filed = await this.files.stash(message)
        if (!filed.images) return filed
        const images = await Promise.all(filed.images.map((image) => this.stashImage(image)))
        return { ...filed, images: images as [AnyImage, ...AnyImage[]] }
      }),
    )
  }

  /**
   * A turn's input record as version 2 stores it: its `data:` images by reference; version 3
   * when texts of it were kept as artifacts (`input_artifacts`); version 4 when a follow-up's
   * text was (its own `input_artifacts`).
   */
  async stashInput(record: ReadableTurnInput): Promise<StoredInputRecord> {
    const { version: _version, input, ...rest } = record
    const kept = 'input_artifacts' in rest ? rest.input_artifacts : undefined
    const followUps = rest.follow_ups
    const keptFollowUp = followUps?.some((f) => 'input_artifacts' in f && f.input_artifacts)
    const stored = (given: Omit<TurnInputRecordV2, 'version'>): StoredInputRecord =>
      keptFollowUp
        ? {
            version: KEPT_FOLLOW_UP_INPUT_VERSION,
            ...given,
            ...(followUps ? { follow_ups: followUps } : {}),
            ...(kept ? { input_artifacts: kept } : {}),
          }
        : kept
          ? { version: KEPT_TURN_INPUT_VERSION, ...given, input_artifacts: kept }
          : { version: STORED_TURN_INPUT_VERSION, ...given }
    const follow = followUps ? { follow_ups: followUps } : {}
    if (typeof input !== 'object') {
      return stored({ ...(input === undefined ? {} : { input }), ...follow })
    }
    const parts = await Promise.all(
      input.map(async (part) => {
        if (part.type !== 'input_image' || !('image_url' in part)) return part
        const ref = await this.stash(part.image_url)
        return ref ? { type: 'input_image' as const, image: ref, ...detail(part) } : part
      }),
    )
    return stored({ input: parts, ...follow })
  }

  /** The messages with their stored images loaded back as `data:` URLs. */
  async loadMessages(messages: HistoryMessage[]): Promise<HistoryMessage[]> {
    if (!messages.some((m) => hasStored(m) || hasFiles(m, 'stored'))) return messages
    return Promise.all(
      messages.map(async (message) => {
        if (message.role !== 'user') return message
        const filed = await this.files.load(message)
        if (!filed.images?.some((image) => 'sha256' in image)) return filed
        const images = await Promise.all(filed.images.map((image) => this.loadImage(image)))
        return { ...filed, images: images as [UserImage, ...UserImage[]] }
      }),
    )
  }

  /** A recorded turn input as the API lists it: the input as given, images as `data:` URLs. */
  async loadInput(record: ReadableTurnInput): Promise<TurnInputRecord> {
    const { version: _version, input, ...rest } = record
    if (typeof input !== 'object') {
      return { version: 1, ...(input === undefined ? {} : { input }), ...rest }
    }
    const parts = await Promise.all(
      input.map(async (part) =>
        part.type === 'input_image' && 'image' in part
          ? {
              type: 'input_image' as const,
              image_url: await this.load(part.image),
              ...detail(part),
            }
          : part,
      ),
    )
    return { version: 1, input: parts as [(typeof parts)[number]], ...rest }
  }

  /** A stored image's `data:` URL (checked against its SHA-256 name). */
  load(ref: ImageRef): Promise<string> {
    let pending = this.loaded.get(ref.sha256)
    if (!pending) {
      pending = this.read(ref)
      this.loaded.set(ref.sha256, pending)
      pending.catch(() => this.loaded.delete(ref.sha256))
    }
    return pending
  }

  private async read(ref: ImageRef): Promise<string> {
    const stored = await this.store.get(`${this.folder}${ref.sha256}.json`)
    if (!stored) {
      throw new TurnlineError(
        'corrupt_data',
        `image ${ref.sha256.slice(0, 16)} of the transcript is missing from the session's folder`,
      )
    }
    return dataUrlOf(parseStoredImage(fromBytes(stored.body, 'image'), ref.sha256))
  }

  private async stashImage(image: AnyImage): Promise<AnyImage> {
    if (!('url' in image)) return image
    const ref = await this.stash(image.url)
    return ref ? { ...ref, ...detail(image) } : image
  }

  private async loadImage(image: AnyImage): Promise<UserImage> {
    if ('url' in image) return image
    return { url: await this.load(image), ...detail(image) }
  }
}

function detail(image: { detail?: 'auto' | 'low' | 'high' | undefined }) {
  return image.detail ? { detail: image.detail } : {}
}

function hasInline(message: HistoryMessage): boolean {
  return (
    message.role === 'user' &&
    (message.images ?? []).some((image) => 'url' in image && image.url.startsWith('data:'))
  )
}

function hasStored(message: HistoryMessage): boolean {
  return message.role === 'user' && (message.images ?? []).some((image) => 'sha256' in image)
}
