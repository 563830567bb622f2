import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * A turn's user input: a string, or content parts — text and images. An image is a `data:` URL
 * (base64 PNG, JPEG, GIF or WebP) or an `https:` URL the provider fetches itself. The parts are
 * named as in the OpenAI Responses API (`input_text`, `input_image`), which `POST /v1/responses`
 * takes too.
 */
const DATA_IMAGE_URL = /^data:image\/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/]+={0,2}$/

export const ImageUrlSchema = lazySchema(() =>
  z
    .string()
    .max(20_000_000)
    .refine(
      (url) => DATA_IMAGE_URL.test(url) || /^https:\/\/[^\s]+$/.test(url),
      'an image is a data: URL (base64 PNG, JPEG, GIF or WebP) or an https: URL',
    )
    .describe('A `data:image/…;base64,…` URL, or an `https:` URL.'),
)

export const ImageDetailSchema = lazySchema(() =>
  z
    .enum(['auto', 'low', 'high'])
    .describe('How closely the model looks (OpenAI `detail`); absent → `auto`.'),
)

/**
 * Characters one text of an input may have. The request body's limit (`TURNLINE_MAX_BODY_BYTES`,
 * at most 64 MiB) comes first; a text over the inline limit is kept whole as an artifact of the
 * session and the model reads its preview (src/core/turn/kept-input.ts).
 */
export const INPUT_TEXT_MAX_CHARS = 64 * 1024 * 1024

export const InputTextPartSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('input_text').describe('Always `input_text`.'),
    text: z
      .string()
      .max(INPUT_TEXT_MAX_CHARS)
      .describe(
        'The text. Over the inline limit (`TURNLINE_TOOL_MAX_RESPONSE_BYTES`, 64 KiB) it is kept whole as an artifact of the session and the model reads a preview naming it.',
      ),
  }),
)

export const InputImagePartSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('input_image').describe('Always `input_image`.'),
    image_url: ImageUrlSchema,
    detail: ImageDetailSchema.optional(),
  }),
)

export const InputPartSchema = lazySchema(() =>
  z.discriminatedUnion('type', [InputTextPartSchema, InputImagePartSchema]),
)
export type InputPart = z.infer<typeof InputPartSchema>

export const TurnInputSchema = lazySchema(() =>
  z.union([z.string().min(1).max(INPUT_TEXT_MAX_CHARS), z.array(InputPartSchema).min(1).max(64)]),
)
export type TurnInput = z.infer<typeof TurnInputSchema>

/** An image of a user message, as the transcript keeps it. */
export const UserImageSchema = lazySchema(() =>
  z.object({
    url: z.string(),
    detail: z.enum(['auto', 'low', 'high']).optional(),
  }),
)
export type UserImage = z.infer<typeof UserImageSchema>

/** The text of an input (its text parts joined by blank lines) and its images, in order. */
export function splitTurnInput(input: TurnInput): { text: string; images: UserImage[] } {
  if (typeof input === 'string') return { text: input, images: [] }
  const texts: string[] = []
  const images: UserImage[] = []
  for (const part of input) {
    if (part.type === 'input_text') texts.push(part.text)
    else images.push({ url: part.image_url, ...(part.detail ? { detail: part.detail } : {}) })
  }
  return { text: texts.filter((text) => text !== '').join('\n\n'), images }
}
