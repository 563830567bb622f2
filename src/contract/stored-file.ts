import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'
import { parseStoredBlob } from './stored-blob.ts'

/**
 * A document a user sent (an Open Responses `input_file` a model reads as a document: a PDF),
 * carried by its user message as `files`. Like an image (stored-image.ts) it is kept once in its
 * session's folder (`files/<sha256>.json`) and named by reference in the transcript, instead of
 * inline in every batch and checkpoint that carries the message; it is loaded again for each
 * model request (src/store/session-files.ts). Text files never become documents: their text is
 * the message's (src/contract/input-file.ts).
 */
export const STORED_FILE_FORMAT = 'turnline.file'
export const STORED_FILE_VERSION = 1

/** What a model is sent as a document. */
export const DocumentMediaTypeSchema = lazySchema(() => z.enum(['application/pdf']))
export type DocumentMediaType = z.infer<typeof DocumentMediaTypeSchema>

const Sha256Schema = lazySchema(() =>
  z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 is 64 lowercase hex characters'),
)
const FilenameSchema = lazySchema(() => z.string().min(1).max(255))

/** A document as a model adapter sends it: its name and bytes (base64). */
export const UserFileSchema = lazySchema(() =>
  z.object({
    filename: FilenameSchema,
    media_type: DocumentMediaTypeSchema,
    data: z.string().min(1),
  }),
)
export type UserFile = z.infer<typeof UserFileSchema>

/** A document of a user message stored in the session's folder, by reference. */
export const StoredUserFileSchema = lazySchema(() =>
  z.object({
    filename: FilenameSchema,
    sha256: Sha256Schema,
    media_type: DocumentMediaTypeSchema,
    size: z.int().min(1),
  }),
)
export type StoredUserFile = z.infer<typeof StoredUserFileSchema>

/** A stored document reaches an adapter only loaded (SessionFiles.load); one that did not is a fault. */
export function sentFile(file: UserFile | StoredUserFile): UserFile {
  if ('data' in file) return file
  throw new TurnlineError(
    'internal',
    `file ${file.sha256.slice(0, 16)} was not loaded from the store before the model request`,
  )
}

/** The `data:` URL of a document. */
export function fileDataUrl(file: UserFile): string {
  return `data:${file.media_type};base64,${file.data}`
}

/** `files/<sha256>.json` (version 1): the document's bytes, base64, with what they are. */
export const StoredFileSchema = lazySchema(() =>
  z.strictObject({
    format: z.literal(STORED_FILE_FORMAT),
    version: z.literal(STORED_FILE_VERSION),
    sha256: Sha256Schema,
    media_type: DocumentMediaTypeSchema,
    size: z.int().min(1),
    data: z.string().min(1),
  }),
)
export type StoredFile = z.infer<typeof StoredFileSchema>

/** Reads a stored document: corrupt_data when it is not one, unsupported_version when newer. */
export function parseStoredFile(text: string, sha256: string): StoredFile {
  return parseStoredBlob(text, sha256, 'file', STORED_FILE_VERSION, StoredFileSchema)
}
