import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'
import { parseStoredBlob } from './stored-blob.ts'
import { ImageDetailSchema, type UserImage } from './turn-input.ts'

/**
 * An image a user sent, kept once in its session's folder (`images/<sha256>.json`) and named by
 * reference in the transcript and the turn's input record, instead of inline in every batch and
 * checkpoint that carries the message. Content-addressed (the SHA-256 of the image's bytes), so
 * the same image is stored once per session and a stored object is never rewritten. The model
 * is sent the image again from here on every request (src/store/session-images.ts).
 */
export const STORED_IMAGE_FORMAT = 'turnline.image'
export const STORED_IMAGE_VERSION = 1

export const ImageMediaTypeSchema = lazySchema(() =>
  z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']),
)
export type ImageMediaType = z.infer<typeof ImageMediaTypeSchema>

const Sha256Schema = lazySchema(() =>
  z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 is 64 lowercase hex characters'),
)

/** A stored image as the transcript names it. */
export const ImageRefSchema = lazySchema(() =>
  z.object({
    sha256: Sha256Schema,
    media_type: ImageMediaTypeSchema,
    /** Bytes of the image. */
    size: z.int().min(1),
  }),
)
export type ImageRef = z.infer<typeof ImageRefSchema>

/** An image of a user message stored in the session's folder, by reference (transcript v3). */
export const StoredUserImageSchema = lazySchema(() =>
  ImageRefSchema.extend({ detail: ImageDetailSchema.optional() }),
)
export type StoredUserImage = z.infer<typeof StoredUserImageSchema>

/**
 * An image as a model adapter sends it: a URL. A stored image reaches an adapter only loaded
 * (`SessionImages.load`, src/store/session-images.ts); one that did not is a fault.
 */
export function sentImage(image: UserImage | StoredUserImage): UserImage {
  if ('url' in image) return image
  throw new TurnlineError(
    'internal',
    `image ${image.sha256.slice(0, 16)} was not loaded from the store before the model request`,
  )
}

/** `images/<sha256>.json` (version 1): the image's bytes, base64, with what they are. */
export const StoredImageSchema = lazySchema(() =>
  z.strictObject({
    format: z.literal(STORED_IMAGE_FORMAT),
    version: z.literal(STORED_IMAGE_VERSION),
    sha256: Sha256Schema,
    media_type: ImageMediaTypeSchema,
    size: z.int().min(1),
    data: z.string().min(1),
  }),
)
export type StoredImage = z.infer<typeof StoredImageSchema>

const DATA_URL = /^data:(image\/(?:png|jpeg|gif|webp));base64,([A-Za-z0-9+/]+={0,2})$/

/** The media type and base64 payload of a `data:` image URL; undefined for any other URL. */
export function dataImage(url: string): { mediaType: ImageMediaType; base64: string } | undefined {
  const match = DATA_URL.exec(url)
  if (!match?.[1] || !match[2]) return undefined
  return { mediaType: match[1] as ImageMediaType, base64: match[2] }
}

/** The `data:` URL of a stored image. */
export function dataUrlOf(image: StoredImage): string {
  return `data:${image.media_type};base64,${image.data}`
}

/** Reads a stored image: corrupt_data when it is not one, unsupported_version when newer. */
export function parseStoredImage(text: string, sha256: string): StoredImage {
  return parseStoredBlob(text, sha256, 'image', STORED_IMAGE_VERSION, StoredImageSchema)
}
