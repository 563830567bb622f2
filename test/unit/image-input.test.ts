import { describe, expect, it } from 'vitest'
import { HistoryMessageSchema } from '../../src/contract/history-message.ts'
import { splitTurnInput, TurnInputSchema } from '../../src/contract/turn-input.ts'
import { imageRefusal, userMessageOf } from '../../src/core/model/image-input.ts'

const PNG = 'data:image/png;base64,iVBORw0KGgo='

describe('turn input with images', () => {
  it('joins the text parts and keeps the images in order', () => {
    const input = TurnInputSchema.parse([
      { type: 'input_text', text: 'first' },
      { type: 'input_image', image_url: PNG },
      { type: 'input_text', text: 'second' },
      { type: 'input_image', image_url: 'https://example.com/b.png', detail: 'low' },
    ])
    expect(splitTurnInput(input)).toEqual({
      text: 'first\n\nsecond',
      images: [{ url: PNG }, { url: 'https://example.com/b.png', detail: 'low' }],
    })
    expect(splitTurnInput('plain')).toEqual({ text: 'plain', images: [] })
  })

  it('takes data: image URLs and https URLs only', () => {
    const image = (image_url: string) =>
      TurnInputSchema.safeParse([{ type: 'input_image', image_url }]).success
    expect(image(PNG)).toBe(true)
    expect(image('data:image/webp;base64,UklGRg==')).toBe(true)
    expect(image('https://example.com/x.jpg')).toBe(true)
    expect(image('http://example.com/x.jpg')).toBe(false)
    expect(image('data:image/svg+xml;base64,PHN2Zz4=')).toBe(false)
    expect(image('data:image/png;base64,not base64!')).toBe(false)
    expect(TurnInputSchema.safeParse([]).success).toBe(false)
  })

  it('makes a user message whose images the stored history keeps', () => {
    const message = userMessageOf([{ type: 'input_image', image_url: PNG }], {
      name: 'gpt-4.1',
      api: 'chat',
    })
    expect(message).toEqual({ role: 'user', content: '', images: [{ url: PNG }] })
    expect(HistoryMessageSchema.parse(JSON.parse(JSON.stringify(message)))).toEqual(message)
    expect(userMessageOf('hi', { name: 'deepseek-chat', api: 'chat' })).toEqual({
      role: 'user',
      content: 'hi',
    })
  })

  it('refuses images for models known to take none, by name under any provider prefix', () => {
    expect(imageRefusal({ name: 'deepseek/deepseek-chat', api: 'chat' })).toMatch(/no image/)
    expect(imageRefusal({ name: 'openai/gpt-oss-120b', api: 'chat' })).toMatch(/no image/)
    expect(imageRefusal({ name: 'claude-sonnet-4-5', api: 'anthropic' })).toBeUndefined()
    expect(imageRefusal({ name: 'gpt-4.1-mini', api: 'responses' })).toBeUndefined()
    expect(imageRefusal(undefined)).toBeUndefined()
    expect(() =>
      userMessageOf([{ type: 'input_image', image_url: PNG }], { name: 'o3-mini', api: 'chat' }),
    ).toThrow(/o3-mini takes no image input/)
  })
})
