import { describe, expect, it } from 'vitest'
import { applyChunks, planPatch } from '../../src/contract/patch-apply.ts'
import { parsePatch } from '../../src/contract/patch-parser.ts'

function ops(text: string) {
  const parsed = parsePatch(text)
  if (!parsed.ok) throw new Error(parsed.message)
  return parsed.ops
}

function fsOf(files: Record<string, string>) {
  return async (path: string) => files[path]
}

describe('parsePatch', () => {
  it('reads add, delete, update with move, context and end-of-file hunks', () => {
    const parsed = ops(
      [
        '*** Begin Patch',
        '*** Add File: docs/new.md',
        '+# Title',
        '+',
        '+body',
        '*** Delete File: old.txt',
        '*** Update File: src/app.py',
        '*** Move to: src/main.py',
        '@@ def greet():',
        '-    print("Hi")',
        '+    print("Hello")',
        '@@',
        ' last',
        '+appended',
        '*** End of File',
        '*** End Patch',
      ].join('\n'),
    )
    expect(parsed).toEqual([
      { type: 'add', path: 'docs/new.md', contents: '# Title\n\nbody\n' },
      { type: 'delete', path: 'old.txt' },
      {
        type: 'update',
        path: 'src/app.py',
        moveTo: 'src/main.py',
        chunks: [
          {
            context: 'def greet():',
            oldLines: ['    print("Hi")'],
            newLines: ['    print("Hello")'],
            endOfFile: false,
          },
          { oldLines: ['last'], newLines: ['last', 'appended'], endOfFile: true },
        ],
      },
    ])
  })

  it('is lenient with CRLF, blank surroundings, a heredoc wrapper and a first hunk without @@', () => {
    const text =
      "\n\napply_patch <<'EOF'\r\n*** Begin Patch\r\n*** Update File: a.txt\r\n-x\r\n+y\r\n*** End Patch\r\nEOF\n\n"
    expect(ops(text)).toEqual([
      {
        type: 'update',
        path: 'a.txt',
        chunks: [{ oldLines: ['x'], newLines: ['y'], endOfFile: false }],
      },
    ])
  })

  it.each([
    ['', "first line of the patch must be '*** Begin Patch'"],
    ['*** Begin Patch\n*** Add File: a\n+x', "last line of the patch must be '*** End Patch'"],
    ['*** Begin Patch\n*** End Patch', 'changes no file'],
    ['*** Begin Patch\n*** Frobnicate File: a\n*** End Patch', 'line 2: expected'],
    [
      '*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch',
      'line 3: every line of an added file',
    ],
    ['*** Begin Patch\n*** Update File: a\n*** End Patch', 'update of a has no hunks'],
    ['*** Begin Patch\n*** Update File: a\n@@\n*** End Patch', 'hunk in a has no lines'],
    [
      '*** Begin Patch\n*** Update File: a\n@@\n?x\n*** End Patch',
      'line 4: a hunk line starts with',
    ],
    ['*** Begin Patch\n*** Add File: /etc/passwd\n+x\n*** End Patch', 'must be relative'],
    ['*** Begin Patch\n*** Delete File: a/../../b\n*** End Patch', 'must not contain ".."'],
    ['*** Begin Patch\n*** Add File: \n+x\n*** End Patch', 'line 2'],
  ])('rejects %j cleanly', (text, message) => {
    const parsed = parsePatch(text)
    expect(parsed.ok).toBe(false)
    if (!parsed.ok) expect(parsed.message).toContain(message)
  })
})

describe('applyChunks', () => {
  it('replaces lines found after the context line, keeping the rest', () => {
    const [op] = ops(
      '*** Begin Patch\n*** Update File: f\n@@ function b() {\n-  return 1\n+  return 2\n*** End Patch',
    )
    if (op?.type !== 'update') throw new Error('update expected')
    const original = 'function a() {\n  return 1\n}\nfunction b() {\n  return 1\n}\n'
    expect(applyChunks(original, op.chunks)).toEqual({
      ok: true,
      content: 'function a() {\n  return 1\n}\nfunction b() {\n  return 2\n}\n',
    })
  })

  it('matches ignoring trailing whitespace and typographic punctuation, keeps CRLF', () => {
    const [op] = ops(
      '*** Begin Patch\n*** Update File: f\n@@\n-say "hi" - now\n+say "bye"\n*** End Patch',
    )
    if (op?.type !== 'update') throw new Error('update expected')
    expect(applyChunks('first\r\nsay \u201chi\u201d \u2013 now  \r\nlast\r\n', op.chunks)).toEqual({
      ok: true,
      content: 'first\r\nsay "bye"\r\nlast\r\n',
    })
  })

  it('anchors an end-of-file hunk at the end', () => {
    const [op] = ops(
      '*** Begin Patch\n*** Update File: f\n@@\n x\n+end\n*** End of File\n*** End Patch',
    )
    if (op?.type !== 'update') throw new Error('update expected')
    expect(applyChunks('x\ny\nx\n', op.chunks)).toEqual({ ok: true, content: 'x\ny\nx\nend\n' })
  })

  it('fails, naming the lines, when a hunk does not match', () => {
    const [op] = ops('*** Begin Patch\n*** Update File: f\n@@\n-absent\n+x\n*** End Patch')
    if (op?.type !== 'update') throw new Error('update expected')
    const result = applyChunks('present\n', op.chunks)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.message).toContain('absent')
  })
})

describe('planPatch', () => {
  it('plans every write before any happens, over the effects of earlier operations', async () => {
    const plan = await planPatch(
      ops(
        [
          '*** Begin Patch',
          '*** Add File: n.txt',
          '+one',
          '*** Update File: n.txt',
          '@@',
          '-one',
          '+two',
          '*** Update File: m.txt',
          '*** Move to: moved/m.txt',
          '@@',
          '-a',
          '+b',
          '*** Delete File: gone.txt',
          '*** End Patch',
        ].join('\n'),
      ),
      fsOf({ 'm.txt': 'a\n', 'gone.txt': 'bye\n' }),
    )
    expect(plan).toEqual({
      ok: true,
      writes: [
        { path: 'n.txt', content: 'two\n' },
        { path: 'm.txt', delete: true },
        { path: 'moved/m.txt', content: 'b\n' },
        { path: 'gone.txt', delete: true },
      ],
      changes: [
        { path: 'n.txt', kind: 'add' },
        { path: 'n.txt', kind: 'update' },
        { path: 'm.txt', kind: 'delete' },
        { path: 'moved/m.txt', kind: 'add' },
        { path: 'gone.txt', kind: 'delete' },
      ],
    })
  })

  it.each([
    ['*** Begin Patch\n*** Delete File: nope\n*** End Patch', 'cannot delete nope: no such file'],
    ['*** Begin Patch\n*** Update File: nope\n@@\n-a\n+b\n*** End Patch', 'cannot update nope'],
    ['*** Begin Patch\n*** Update File: a.txt\n@@\n-zzz\n+b\n*** End Patch', 'hunk does not match'],
  ])('refuses %j as a whole', async (text, message) => {
    const plan = await planPatch(ops(text), fsOf({ 'a.txt': 'a\n' }))
    expect(plan.ok).toBe(false)
    if (!plan.ok) expect(plan.message).toContain(message)
  })
})
