import * as z from 'zod'
import { base64Bytes } from '../shared/base64.ts'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'
import type { UserFile } from './stored-file.ts'

/**
 * An Open Responses `input_file` content part of a user message: the file's bytes as
 * `file_data` (a `data:<media type>;base64,…` URL, or bare base64 with a `filename` whose
 * extension says what it is). How it reaches the model depends on what it is:
 *
 * - a text file (`text/*`, JSON, XML, YAML, CSV, TOML, source code…, UTF-8) becomes text of its
 *   message, between lines naming it: every model reads it;
 * - an image (PNG, JPEG, GIF, WebP) becomes an `input_image` of the message;
 * - a PDF becomes a document of the message (`files`, stored once by reference like an image,
 *   stored-file.ts), sent as the provider takes documents (OpenAI Responses `input_file`, Chat
 *   Completions `file` part, Anthropic `document` block).
 *
 * `file_id` (Turnline has no Files API) and `file_url` (Turnline fetches nothing for a client)
 * are refused, as is any other kind of file: 400 naming the field.
 */
export const InputFilePartSchema = lazySchema(() =>
  z.object({
    type: z.literal('input_file').describe('Always `input_file`.'),
    file_data: z
      .string()
      .max(50_000_000)
      .nullish()
      .describe('The bytes: a `data:<media type>;base64,…` URL, or base64 with `filename`.'),
    filename: z.string().max(255).nullish().describe('The name the model is shown.'),
    file_url: z.string().max(8192).nullish().describe('Not supported: send `file_data`.'),
    file_id: z.string().max(200).nullish().describe('Not supported: send `file_data`.'),
  }),
)
export type InputFilePart = z.infer<typeof InputFilePartSchema>

export type ResolvedFile =
  | { kind: 'text'; text: string }
  | { kind: 'image'; url: string }
  | { kind: 'document'; file: UserFile }

const TEXT_TYPES = new Set([
  'application/json',
  'application/xml',
  'application/yaml',
  'application/x-yaml',
  'application/toml',
  'application/javascript',
  'application/typescript',
  'application/x-sh',
  'application/sql',
  'application/csv',
])
const EXTENSION_TYPES: Record<string, string> = {
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  json: 'application/json',
  xml: 'application/xml',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  toml: 'application/toml',
  csv: 'text/csv',
}
const TEXT_EXTENSIONS =
  /\.(txt|md|markdown|rst|log|ini|cfg|conf|env|html?|css|s?[cm]?[jt]sx?|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|bash|zsh|sql|r|lua|pl|scala|vue|svelte|tex|diff|patch)$/i
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])
const DATA_URL = /^data:([a-z0-9.+-]+\/[a-z0-9.+-]+)?((?:;[a-z0-9-]+=[^;,]*)*);base64,(.*)$/is
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** What an `input_file` part is for the model; invalid_input naming `field` when it cannot be. */
export function resolveInputFile(part: InputFilePart, field: string): ResolvedFile {
  const refuse = (at: string, message: string) =>
    new TurnlineError('invalid_input', message, { details: { field: `${field}${at}` } })
  if (part.file_id != null) {
    throw refuse(
      '.file_id',
      "file_id is not supported: Turnline has no Files API; send the file's bytes as file_data (a data: URL) with its filename",
    )
  }
  if (part.file_data == null) {
    throw part.file_url != null
      ? refuse(
          '.file_url',
          "file_url is not supported: Turnline fetches no file for a client; send the file's bytes as file_data (a data: URL) with its filename",
        )
      : refuse('.file_data', "input_file needs file_data: the file's bytes as a data: URL")
  }
  const filename = part.filename ?? undefined
  const match = DATA_URL.exec(part.file_data)
  const base64 = (match ? (match[3] ?? '') : part.file_data).replace(/\s+/g, '')
  if (base64 === '' || !BASE64.test(base64)) {
    throw refuse('.file_data', 'file_data is not base64 (a data:<media type>;base64,… URL)')
  }
  const named = filename?.split('.').at(-1)?.toLowerCase()
  const declared = match?.[1]?.toLowerCase()
  const mediaType =
    declared && declared !== 'application/octet-stream'
      ? declared
      : ((named && EXTENSION_TYPES[named]) ??
        (filename && TEXT_EXTENSIONS.test(filename) ? 'text/plain' : declared))
  if (mediaType === 'application/pdf') {
    return {
      kind: 'document',
      file: { filename: filename ?? 'document.pdf', media_type: 'application/pdf', data: base64 },
    }
  }
  if (mediaType && IMAGE_TYPES.has(mediaType)) {
    return { kind: 'image', url: `data:${mediaType};base64,${base64}` }
  }
  if (mediaType && (mediaType.startsWith('text/') || TEXT_TYPES.has(mediaType))) {
    let text: string
    try {
      const bytes = base64Bytes(base64)
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
    } catch {
      throw refuse('.file_data', `${filename ?? 'the file'} is not UTF-8 text`)
    }
    const name = filename ?? 'file'
    return { kind: 'text', text: `--- file: ${name} ---\n${text}\n--- end of file: ${name} ---` }
  }
  throw refuse(
    '',
    `input_file ${filename ? `${JSON.stringify(filename)} ` : ''}of type ${mediaType ?? 'unknown'} is not supported: send text files (UTF-8), PDFs or images (PNG, JPEG, GIF, WebP), with the media type in the data: URL or the extension in filename`,
  )
}
