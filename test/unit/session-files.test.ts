import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { parseStoredFile } from '../../src/contract/stored-file.ts'
import { SessionImages } from '../../src/store/session-images.ts'

/**
 * Documents stored apart: a PDF of a user message (`files`) is one object of the session's
 * files/ folder (format `turnline.file` v1) named by reference in the transcript (read-only
 * fixtures in test/fixtures/store/v3/), stored and loaded with the message's images.
 */
const text = (path: string) =>
  readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url), 'utf8')
const SHA = 'd0192f3321a6052de50639be74be46fd471430d6e1979212d6dd9ebb04cfd6c0'
const DATA = Buffer.from('%PDF-1.4\n1 0 obj << /Title (Fixture) >> endobj\n%%EOF\n').toString(
  'base64',
)
const encoder = new TextEncoder()

describe('stored files', () => {
  it('reads a version 3 batch naming its document by reference, byte for byte, and loads it', async () => {
    const source = text('v3/batch-file.json')
    const batch = parseBatch(source)
    expect(serializeBatch(batch)).toBe(source)
    expect(source).not.toContain(DATA)
    const user = batch.history?.append[0] as HistoryMessage
    const store = new MemoryObjectStore()
    await store.put(`s/files/${SHA}.json`, encoder.encode(text(`v3/files/${SHA}.json`)))
    const [loaded] = await new SessionImages(store, 's/').loadMessages([user])
    expect(loaded).toEqual({
      role: 'user',
      content: 'Title?',
      files: [{ filename: 'fixture.pdf', media_type: 'application/pdf', data: DATA }],
    })
  })

  it('stores a document once, content-addressed, and gives the same bytes back', async () => {
    const store = new MemoryObjectStore()
    const images = new SessionImages(store, 's/')
    const message: HistoryMessage = {
      role: 'user',
      content: 'Title?',
      files: [{ filename: 'fixture.pdf', media_type: 'application/pdf', data: DATA }],
    }
    const [first] = await images.stashMessages([message])
    const [again] = await images.stashMessages([{ ...message, content: 'Again?' }])
    expect(first).toEqual({
      role: 'user',
      content: 'Title?',
      files: [{ filename: 'fixture.pdf', sha256: SHA, media_type: 'application/pdf', size: 53 }],
    })
    expect(again).toMatchObject({ files: [{ sha256: SHA }] })
    const keys = (await store.list('s/')).objects.map((object) => object.key)
    expect(keys).toEqual([`s/files/${SHA}.json`])
    const stored = new TextDecoder().decode((await store.get(keys[0] as string))?.body)
    expect(stored).toBe(text(`v3/files/${SHA}.json`))
    expect(await new SessionImages(store, 's/').loadMessages([first as HistoryMessage])).toEqual([
      message,
    ])
  })

  it('refuses a stored document under another name, of a newer version, or missing', async () => {
    const stored = text(`v3/files/${SHA}.json`)
    expect(() => parseStoredFile(stored, 'f'.repeat(64))).toThrow(/not a stored file/)
    expect(() => parseStoredFile(stored.replace('"version":1', '"version":2'), SHA)).toThrow(
      /version 2/,
    )
    const missing = new SessionImages(new MemoryObjectStore(), 's/')
    const user = parseBatch(text('v3/batch-file.json')).history?.append[0] as HistoryMessage
    await expect(missing.loadMessages([user])).rejects.toThrow(/missing/)
  })
})
