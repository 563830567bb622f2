import { readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * docs/testing.md's audit of the fixed sleeps in test/ stays true: every test file that waits a
 * fixed time (a `setTimeout` resolving a promise, a `sleep(…)` or `delay(…)` helper) is named in
 * its table, and every file the table names exists.
 */
const ROOT = path.resolve(import.meta.dirname, '../..')
const DOC = readFileSync(path.join(ROOT, 'docs/testing.md'), 'utf8')
const SLEEP = /setTimeout\(\s*(resolve|r)\s*,|(?<![.\w])(sleep|delay)\(\s*[\w.]/

function walk(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`
    if (entry.isDirectory()) return rel === 'test/fixtures' ? [] : walk(rel)
    return rel.endsWith('.ts') ? [rel] : []
  })
}

const table = DOC.slice(DOC.indexOf('## Audit'))
const named = [...table.matchAll(/`(test\/[\w./-]+\.ts)`/g)].map((m) => m[1] as string)

describe('docs/testing.md', () => {
  it('names every test file that sleeps a fixed time', () => {
    const sleeping = walk('test').filter((file) =>
      SLEEP.test(readFileSync(path.join(ROOT, file), 'utf8')),
    )
    expect(sleeping.length).toBeGreaterThan(10)
    expect(sleeping.filter((file) => !named.includes(file))).toEqual([])
  })

  it('names only files that exist', () => {
    const files = walk('test')
    expect(named.filter((file) => !files.includes(file))).toEqual([])
  })
})
