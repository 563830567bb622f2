import { createHash } from 'node:crypto'
import type { MockRequest } from './mock-openai.ts'

/** SHA-256 (hex) of bytes or a string's UTF-8. */
export const sha = (data: Uint8Array | string) => createHash('sha256').update(data).digest('hex')

/**
 * A pasted log of about `bytes` (ASCII, numbered lines tagged `tag`); the line in the middle holds
 * `marker` (10 characters), so a reader of the middle can be told from a reader of the ends.
 */
export function pastedLog(bytes: number, tag: string, marker: string): string {
  const line = (n: number) => `${tag} ${String(n).padStart(8, '0')} ${'y'.repeat(60)}\n`
  const count = Math.floor(bytes / line(0).length)
  const middle = Math.floor(count / 2)
  return Array.from({ length: count }, (_, n) =>
    n === middle ? line(n).replace('y'.repeat(marker.length), marker) : line(n),
  ).join('')
}

/** The user messages' text of a model request, joined by line feeds. */
export function userText(request: MockRequest | undefined): string {
  const messages = (request?.body.messages ?? []) as { role: string; content: unknown }[]
  return messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n')
}

/** The first output artifact a preview in `text` names. */
export const artifactIn = (text: string) =>
  /kept whole as artifact (out_[0-9a-f]{32})/.exec(text)?.[1]
