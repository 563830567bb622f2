import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * Every operator log line the server and the runner write is listed in
 * docs/configuration.md#operator-log: the `msg` literals of functions/, src/ and adapters/ (the
 * runner's lines: the `event` of adapters/runner/, which becomes their `msg`), read from the
 * source, each documented as `` `msg` ``. A line whose `msg` is built at run time could not be
 * listed, so there is none.
 */
const root = new URL('../../', import.meta.url).pathname
const LINE = /\bmsg:\s*(?:[\w.]+\s*\?\s*)?'([^']+)'(?:\s*:\s*'([^']+)')?/g
const RUNNER_LINE = /\bevent:\s*(?:[\w.]+\s*\?\s*)?'([^']+)'(?:\s*:\s*'([^']+)')?/g

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(root, folder, file))
}

function names(pattern: RegExp, text: string): string[] {
  return [...text.matchAll(pattern)].flatMap((m) => [m[1], m[2]]).filter((n) => n !== undefined)
}

const logged = new Map<string, string>()
const built: string[] = []
for (const file of ['functions', 'src', 'adapters'].flatMap(sources)) {
  const text = readFileSync(file, 'utf8')
  const where = relative(root, file)
  for (const name of names(LINE, text)) logged.set(name, where)
  if (where.startsWith('adapters/runner/')) {
    for (const name of names(RUNNER_LINE, text)) logged.set(name, where)
  }
  if (/\bmsg:\s*`/.test(text)) built.push(where)
}
const doc = readFileSync(join(root, 'docs/configuration.md'), 'utf8')
const section = doc.slice(doc.indexOf('## Operator log'), doc.indexOf('## Traces and metrics'))

describe('operator log lines in docs/configuration.md', () => {
  it('finds the lines in the source', () => {
    expect(logged.size).toBeGreaterThan(40)
    expect(logged.get('callback attempt')).toBe('src/core/callbacks/callback-sender.ts')
    expect(logged.get('egress_refused')).toBe('adapters/runner/egress-proxy.ts')
  })

  it('lists every msg the code logs', () => {
    const missing = [...logged].filter(([name]) => !section.includes(`\`${name}\``))
    expect(missing).toEqual([])
  })

  it('has no msg built at run time', () => {
    expect(built).toEqual([])
  })
})
