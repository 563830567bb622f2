import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

/**
 * docs/architecture.md stays true to the tree: every source file it names (a `…ts` or `…mjs` in
 * backticks, by its path or the tail of it), every folder of the repository it names
 * (`src/core/mcp/`, `adapters/redis-tcp/`) and every page it links to exists.
 */
const ROOT = path.resolve(import.meta.dirname, '../..')
const DOC = path.join(ROOT, 'docs/architecture.md')
const TOP = ['src', 'adapters', 'functions', 'test', 'infra', 'docs', 'bench', 'cli', 'client']

function walk(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return []
    const rel = `${dir}/${entry.name}`
    return entry.isDirectory() ? [`${rel}/`, ...walk(rel)] : [rel]
  })
}

const tree = TOP.filter((top) => existsSync(path.join(ROOT, top))).flatMap((top) => [
  `${top}/`,
  ...walk(top),
])
const text = readFileSync(DOC, 'utf8')
const named = [...text.matchAll(/`([^`\s]+)`/g)].map((m) => m[1] as string)

/** A name in the doc is found when a path of the tree is it or ends with `/<name>`. */
const found = (name: string) => tree.some((file) => file === name || file.endsWith(`/${name}`))

describe('docs/architecture.md', () => {
  it('names only source files that exist', () => {
    const files = named
      .filter((name) => /^[\w./-]+\.(ts|mjs)$/.test(name))
      // build outputs are not in the tree
      .filter((name) => !name.startsWith('dist/'))
      .map((name) => name.replace(/^\.\//, ''))
    expect(files.length).toBeGreaterThan(50)
    expect(files.filter((name) => !found(name))).toEqual([])
  })

  it('names only folders of the repository that exist', () => {
    const folders = named.filter((name) =>
      TOP.some((top) => name.startsWith(`${top}/`) && name.endsWith('/')),
    )
    expect(folders.length).toBeGreaterThan(5)
    expect(folders.filter((name) => !tree.includes(name))).toEqual([])
  })

  it('links only to pages that exist', () => {
    const links = [...text.matchAll(/\]\(([^)#\s]+)(#[^)]*)?\)/g)]
      .map((m) => m[1] as string)
      .filter((link) => !/^[a-z]+:/.test(link))
    expect(links.length).toBeGreaterThan(5)
    const missing = links.filter((link) => {
      const target = path.join(path.dirname(DOC), link)
      return !existsSync(target) || !statSync(target).isFile()
    })
    expect(missing).toEqual([])
  })
})
