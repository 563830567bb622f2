import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { parseBatch, serializeBatch } from '../../src/contract/batch.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import { parseStoredImage, sentImage } from '../../src/contract/stored-image.ts'
import { readableTurnInput } from '../../src/contract/turn-input-record.ts'
import { SessionImages } from '../../src/store/session-images.ts'

/**
 * Images stored apart: a `data:` image of the transcript or of a turn's input record is one
 * object of the session's images/ folder (format `turnline.image` v1) named by reference in
 * batch version 3 and turn input version 2 (read-only fixtures in test/fixtures/store/v3/); the
 * older inline form (test/fixtures/store/turn-input/, batch version 2) still reads and is sent
 * as it is.
 */
const text = (path: string) =>
  readFileSync(new URL(`../fixtures/store/${path}`, import.meta.url), 'utf8')
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='
const SHA = '497790947d4666760ce38f3c00e852c71fdb66cae849bae8e9ede352719e1581'
const encoder = new TextEncoder()

/** A store holding the fixture image in session `s`. */
async function storeWithFixture() {
  const store = new MemoryObjectStore()
  await store.put(`s/images/${SHA}.json`, encoder.encode(text(`v3/images/${SHA}.json`)))
  return { store, images: new SessionImages(store, 's/') }
}

describe('stored images', () => {
  it('reads a version 3 batch naming its image by reference, byte for byte, and loads it', async () => {
    const source = text('v3/batch-image.json')
    const batch = parseBatch(source)
    expect(serializeBatch(batch)).toBe(source)
    expect(source).not.toContain(';base64,')
    const user = batch.history?.append[1]
    expect(user).toMatchObject({
      role: 'user',
      images: [
        { sha256: SHA, media_type: 'image/png', size: 70, detail: 'low' },
        { url: 'https://example.com/after.webp' },
      ],
    })
    const { images } = await storeWithFixture()
    const [loaded] = await images.loadMessages([user as HistoryMessage])
    expect(loaded).toEqual({
      role: 'user',
      content: 'What is in this picture?',
      images: [{ url: PNG, detail: 'low' }, { url: 'https://example.com/after.webp' }],
    })
    const record = readableTurnInput(batch.turn_input)
    expect(record?.version).toBe(2)
    expect(await images.loadInput(record as NonNullable<typeof record>)).toMatchObject({
      version: 1,
      input: [
        { type: 'input_text' },
        { type: 'input_image', image_url: PNG, detail: 'low' },
        { type: 'input_image', image_url: 'https://example.com/after.webp' },
      ],
    })
  })

  it('stores a data: image once, content-addressed, and gives the same bytes back', async () => {
    const store = new MemoryObjectStore()
    const images = new SessionImages(store, 'sess/')
    const message: HistoryMessage = {
      role: 'user',
      content: 'twice',
      images: [{ url: PNG }, { url: PNG, detail: 'high' }],
    }
    const [stored] = await images.stashMessages([message])
    expect(stored).toEqual({
      role: 'user',
      content: 'twice',
      images: [
        { sha256: SHA, media_type: 'image/png', size: 70 },
        { sha256: SHA, media_type: 'image/png', size: 70, detail: 'high' },
      ],
    })
    const { objects } = await store.list('sess/')
    expect(objects.map((o) => o.key)).toEqual([`sess/images/${SHA}.json`])
    const body = new TextDecoder().decode((await store.get(`sess/images/${SHA}.json`))?.body)
    expect(body).toBe(text(`v3/images/${SHA}.json`))
    expect(
      await new SessionImages(store, 'sess/').loadMessages([stored as HistoryMessage]),
    ).toEqual([{ ...message, images: [{ url: PNG }, { url: PNG, detail: 'high' }] }])
  })

  it('reads the older inline form and sends it as it is', async () => {
    const batch = parseBatch(text('turn-input/batch.json'))
    expect(batch.version).toBe(2)
    const history = batch.history?.append ?? []
    const { images } = await storeWithFixture()
    expect(await images.loadMessages(history)).toBe(history)
    expect(history[1]).toMatchObject({ images: [{ url: 'data:image/png;base64,iVBORw0KGgo=' }] })
  })

  it('refuses a stored image under another name, of a newer version, or missing', async () => {
    const doc = JSON.parse(text(`v3/images/${SHA}.json`))
    expect(() => parseStoredImage(JSON.stringify(doc), SHA.replace(/^4/, '5'))).toThrow(
      expect.objectContaining({ code: 'corrupt_data' }),
    )
    expect(() => parseStoredImage(JSON.stringify({ ...doc, version: 2 }), SHA)).toThrow(
      expect.objectContaining({ code: 'unsupported_version' }),
    )
    const images = new SessionImages(new MemoryObjectStore(), 'empty/')
    await expect(
      images.loadMessages([
        { role: 'user', content: '', images: [{ sha256: SHA, media_type: 'image/png', size: 70 }] },
      ]),
    ).rejects.toMatchObject({ code: 'corrupt_data' })
    expect(() => sentImage({ sha256: SHA, media_type: 'image/png', size: 70 })).toThrow(
      /not loaded/,
    )
  })
})
