import { resolveInputFile } from './input-file.ts'
import type { InputItem } from './open-responses-input.ts'
import type { UserFile } from './stored-file.ts'

/**
 * The input items with their `input_file` parts resolved (input-file.ts): a text file becomes an
 * `input_text` part, an image an `input_image` part, and a PDF stays an `input_file` part whose
 * `file_data` is its `data:application/pdf;base64,…` URL and whose `filename` is set, for
 * {@link documentOf}. A file that cannot reach a model is a 400 naming its part.
 */
export function withResolvedFiles(items: readonly InputItem[]): InputItem[] {
  return items.map((item, i) => {
    if (item.type !== 'message' || typeof item.content === 'string') return item
    if (!item.content.some((part) => part.type === 'input_file')) return item
    const content = item.content.map((part, j) => {
      if (part.type !== 'input_file') return part
      const resolved = resolveInputFile(part, `body.input[${i}].content[${j}]`)
      if (resolved.kind === 'text') return { type: 'input_text' as const, text: resolved.text }
      if (resolved.kind === 'image')
        return { type: 'input_image' as const, image_url: resolved.url }
      const { file } = resolved
      return {
        type: 'input_file' as const,
        filename: file.filename,
        file_data: `data:${file.media_type};base64,${file.data}`,
      }
    })
    return { ...item, content }
  })
}

/** The document of a resolved `input_file` part ({@link withResolvedFiles}). */
export function documentOf(part: {
  filename?: string | null
  file_data?: string | null
}): UserFile {
  const data = (part.file_data ?? '').slice('data:application/pdf;base64,'.length)
  return { filename: part.filename ?? 'document.pdf', media_type: 'application/pdf', data }
}
