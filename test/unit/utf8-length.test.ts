import { describe, expect, it } from 'vitest'
import { utf8Length } from '../../src/shared/utf8-length.ts'

const encoded = (text: string) => new TextEncoder().encode(text).length

describe('utf8Length', () => {
  it('counts what TextEncoder produces, whatever comes first or last', () => {
    const pieces = [
      '',
      'plain ascii',
      '{"a":"b\\n"}\t\r\n',
      '\u0000\u001b\u007f',
      'é',
      '日本語',
      '😀',
      '\ud800',
      '\udc00',
      '\ud800x',
      'x\ud83d',
      '\u0080\u07ff\u0800\uffff',
    ]
    for (const a of pieces) {
      for (const b of pieces) {
        for (const text of [a + b, `${'x'.repeat(1000)}${a}${b}`, `${a}${'y'.repeat(500)}${b}`]) {
          expect(utf8Length(text), JSON.stringify(text.slice(0, 40))).toBe(encoded(text))
        }
      }
    }
  })
})
