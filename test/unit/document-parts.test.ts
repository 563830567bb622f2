import { describe, expect, it } from 'vitest'
import { toChatMessage } from '../../adapters/openai/chat-messages.ts'
import { providerProfile } from '../../adapters/openai/provider-profile.ts'
import { toResponsesInput } from '../../adapters/openai/responses-request.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { resolveInputFile } from '../../src/contract/input-file.ts'

/**
 * A user message's documents (`files`, an `input_file` PDF) as each OpenAI API takes them, and
 * what an `input_file` part resolves to.
 */
const DATA = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64')
const message: HistoryMessage = {
  role: 'user',
  content: 'Title?',
  files: [{ filename: 'report.pdf', media_type: 'application/pdf', data: DATA }],
}

describe('documents of user messages', () => {
  it('go to Chat Completions as file parts and to Responses as input_file parts', () => {
    expect(toChatMessage(message, providerProfile('openai'))).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Title?' },
        {
          type: 'file',
          file: { filename: 'report.pdf', file_data: `data:application/pdf;base64,${DATA}` },
        },
      ],
    })
    expect(toResponsesInput(message)).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Title?' },
          {
            type: 'input_file',
            filename: 'report.pdf',
            file_data: `data:application/pdf;base64,${DATA}`,
          },
        ],
      },
    ])
  })

  it('must be loaded from the store before they are sent', () => {
    const stored: HistoryMessage = {
      role: 'user',
      content: 'Title?',
      files: [
        { filename: 'report.pdf', media_type: 'application/pdf', sha256: 'a'.repeat(64), size: 9 },
      ],
    }
    expect(() => toResponsesInput(stored)).toThrow(/not loaded/)
  })
})

describe('resolveInputFile', () => {
  const at = 'body.input[0].content[1]'
  it('tells text, images and PDFs apart by media type, else by the filename', () => {
    const text = Buffer.from('# Notes\n').toString('base64')
    expect(
      resolveInputFile({ type: 'input_file', filename: 'notes.md', file_data: text }, at),
    ).toEqual({
      kind: 'text',
      text: '--- file: notes.md ---\n# Notes\n\n--- end of file: notes.md ---',
    })
    expect(
      resolveInputFile(
        {
          type: 'input_file',
          filename: 'a.bin',
          file_data: `data:application/json;base64,${Buffer.from('{}').toString('base64')}`,
        },
        at,
      ),
    ).toMatchObject({ kind: 'text' })
    expect(
      resolveInputFile({ type: 'input_file', filename: 'r.pdf', file_data: DATA }, at),
    ).toEqual({
      kind: 'document',
      file: { filename: 'r.pdf', media_type: 'application/pdf', data: DATA },
    })
    expect(
      resolveInputFile({ type: 'input_file', file_data: `data:image/gif;base64,R0lGOD==` }, at),
    ).toEqual({ kind: 'image', url: 'data:image/gif;base64,R0lGOD==' })
  })

  it('refuses what it cannot send, naming the field', () => {
    const field = (part: Parameters<typeof resolveInputFile>[0]) => {
      try {
        resolveInputFile(part, at)
      } catch (error) {
        return (error as { details?: { field?: string } }).details?.field
      }
      return undefined
    }
    expect(field({ type: 'input_file', file_id: 'file-1' })).toBe(`${at}.file_id`)
    expect(field({ type: 'input_file', file_url: 'https://x/y.pdf' })).toBe(`${at}.file_url`)
    expect(field({ type: 'input_file' })).toBe(`${at}.file_data`)
    expect(field({ type: 'input_file', filename: 'a.exe', file_data: 'TVo=' })).toBe(at)
  })
})
