import { describe, expect, it } from 'vitest'
import * as z from 'zod'
import { readArgs } from '../../src/core/sandbox/exec-tool-schemas.ts'
import { checkArguments } from '../../src/core/tools/tool-arguments.ts'
import { jsonSyntaxError, parseJson } from '../../src/shared/json-syntax.ts'

/**
 * Turnline's own JSON syntax messages: stored in events and sent to the model, so they must not
 * be the engine's `JSON.parse` text (which differs between Node 20, Node 22, Deno and workerd).
 */
describe('jsonSyntaxError', () => {
  it.each([
    ['{x', "expected a property name in double quotes, found 'x' at line 1 column 2 (position 1)"],
    [
      '{"a":1,}',
      "expected a property name in double quotes, found '}' at line 1 column 8 (position 7)",
    ],
    ['{"a" 1}', "expected ':', found '1' at line 1 column 6 (position 5)"],
    ['{"a":1 "b":2}', "expected ',' or '}', found '\"' at line 1 column 8 (position 7)"],
    ['[1,2', "expected ',' or ']', found the end of the text at line 1 column 5 (position 4)"],
    ['[1,]', "expected a value, found ']' at line 1 column 4 (position 3)"],
    ['{"a":\n  tru}', "expected 'true', found '}' at line 2 column 6 (position 11)"],
    [
      '{"q": "weather}',
      "expected a closing '\"', found the end of the text at line 1 column 16 (position 15)",
    ],
    [
      '"a\tb"',
      'expected an escaped control character (\\n, \\t, \\u0000 …), found U+0009 at line 1 column 3 (position 2)',
    ],
    [
      '"\\x"',
      "expected an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u), found 'x' at line 1 column 3 (position 2)",
    ],
    ['"\\u12g4"', "expected a hex digit, found 'g' at line 1 column 6 (position 5)"],
    ['01', "expected the end of the text, found '1' at line 1 column 2 (position 1)"],
    ['-', 'expected a digit, found the end of the text at line 1 column 2 (position 1)'],
    ['1.e5', "expected a digit, found 'e' at line 1 column 3 (position 2)"],
    ['{} {}', "expected the end of the text, found '{' at line 1 column 4 (position 3)"],
    [
      "{'a':1}",
      "expected a property name in double quotes, found ''' at line 1 column 2 (position 1)",
    ],
    ['[😀]', 'expected a value, found U+1F600 at line 1 column 2 (position 1)'],
    ['\ufeff{}', "expected a value, found '\ufeff' at line 1 column 1 (position 0)"],
  ])('%j → %s', (text, message) => {
    expect(() => JSON.parse(text)).toThrow()
    expect(jsonSyntaxError(text)).toBe(message)
  })

  it('finds an error wherever JSON.parse finds one, and none where it finds none', () => {
    const seeds = [
      '{"q":"weather","n":[1,2.5,-3e+2,true,false,null],"o":{"a":"\\u00e9\\n"}}',
      '[{"a":[[]]},{},"x\\"y",0,-0.0,1E-7]',
      '  {"cmd" : ["ls", "-la"] , "timeout_ms":1000 }\n',
    ]
    const alphabet = [
      '{',
      '}',
      '[',
      ']',
      ',',
      ':',
      '"',
      '\\',
      'a',
      '1',
      '-',
      '.',
      'e',
      ' ',
      '\n',
      't',
      'u',
    ]
    let seed = 7
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    let broken = 0
    for (let round = 0; round < 4000; round++) {
      const base = seeds[round % seeds.length] as string
      let text = base
      for (let edits = 1 + random(3); edits > 0; edits--) {
        const at = random(text.length + 1)
        const char = alphabet[random(alphabet.length)] as string
        const kind = random(3)
        text =
          kind === 0
            ? text.slice(0, at) + text.slice(at + 1)
            : kind === 1
              ? text.slice(0, at) + char + text.slice(at)
              : text.slice(0, at) + char + text.slice(at + 1)
      }
      let engineOk = true
      try {
        JSON.parse(text)
      } catch {
        engineOk = false
      }
      const ours = parseJson(text)
      expect(ours.ok, text).toBe(engineOk)
      if (!ours.ok) {
        broken++
        const position = Number(/\(position (\d+)\)$/.exec(ours.reason)?.[1])
        expect(position, text).toBeLessThanOrEqual(text.length)
      }
    }
    expect(broken).toBeGreaterThan(1000)
  })

  it('scans any depth of nesting without recursion', () => {
    const deep = '['.repeat(200_000)
    expect(jsonSyntaxError(deep)).toBe(
      'expected a value, found the end of the text at line 1 column 200001 (position 200000)',
    )
    expect(parseJson(`${'['.repeat(5000)}${']'.repeat(5000)}`).ok).toBe(true)
  })
})

describe('tool arguments that are not JSON', () => {
  it('give the model the same reason on every engine (HTTP and MCP tools)', () => {
    expect(checkArguments('{"q": weather}', { type: 'object' })).toEqual({
      ok: false,
      reason:
        "arguments are not valid JSON: expected a value, found 'w' at line 1 column 7 (position 6)",
    })
  })

  it('give the model the same reason on every engine (sandbox tools)', () => {
    expect(readArgs(z.object({ cmd: z.string() }), '{"cmd":', 'exec_command')).toEqual({
      ok: false,
      message:
        'exec_command: arguments are not valid JSON: expected a value, found the end of the text at line 1 column 8 (position 7)',
    })
  })
})
