import { describe, expect, it } from 'vitest'
import { stdoutData, terminalSafe, terminalSafeValue } from '../../cli/terminal-text.ts'

describe('terminalSafe', () => {
  it('keeps text, newlines, tabs and every printable character as they are', () => {
    const plain = 'line one\n\tindented — ünïcödé ✓ 😀 \u00a0nbsp ␛ already shown'
    expect(terminalSafe(plain)).toBe(plain)
  })

  it('shows ESC as ␛ and removes C0 controls, DEL and C1 controls', () => {
    expect(terminalSafe('\x1b]52;c;Y3Vy\x07')).toBe('␛]52;c;Y3Vy')
    expect(terminalSafe('a\r\nb\rc')).toBe('a\nbc')
    expect(terminalSafe('\x00\x01\x08\x0b\x0c\x1a\x1c\x1f\x7f')).toBe('')
    expect(terminalSafe('x\u009b2J\u0080\u0085\u009fy')).toBe('x2Jy')
    expect(terminalSafe('\u009d52;c;ZXZpbA==\u009c')).toBe('52;c;ZXZpbA==')
  })

  it('makes every string of an event safe, keys and other values unchanged', () => {
    const event = {
      type: 'item.completed',
      item: { text: 'a\x1b[2Kb', n: 3, ok: true, l: ['\x07'] },
    }
    expect(terminalSafeValue(event)).toEqual({
      type: 'item.completed',
      item: { text: 'a␛[2Kb', n: 3, ok: true, l: [''] },
    })
    expect(event.item.text).toBe('a\x1b[2Kb')
  })

  it('passes data to a pipe byte-exact, to a terminal safe', () => {
    expect(stdoutData({ isTTY: false })('\u009b2J\n')).toBe('\u009b2J\n')
    expect(stdoutData({})('\x1b')).toBe('\x1b')
    expect(stdoutData({ isTTY: true })('"\\u001b"\u009b\n')).toBe('"\\u001b"\n')
  })
})
