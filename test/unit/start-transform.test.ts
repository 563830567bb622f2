import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import nodeModule from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '../..')
const transform = pathToFileURL(join(repo, 'infra/start-transform.mjs')).href
const hooks = typeof (nodeModule as { registerHooks?: unknown }).registerHooks === 'function'

/** A TypeScript file with a parameter property, a named closure and a stack read on line 6. */
const SOURCE = [
  'export class Kept {',
  '  constructor(readonly n: number) {}',
  '}',
  'export function where(): { stack: string; inner: string; n: number } {',
  '  const inner = (): number => 1',
  "  const stack = new Error('here').stack ?? ''",
  '  return { stack, inner: inner.name, n: new Kept(inner()).n }',
  '}',
  '',
].join('\n')

/** In a new Node process: registers the transform for `root`, then imports root/where.ts. */
function run(root: string) {
  const script = [
    `const { registerSourceTransform } = await import(${JSON.stringify(transform)})`,
    'process.setSourceMapsEnabled(true)',
    `const registered = await registerSourceTransform(${JSON.stringify(root)})`,
    'if (!registered) { console.log(JSON.stringify({ registered })); process.exit(0) }',
    `const { where } = await import(${JSON.stringify(pathToFileURL(join(root, 'where.ts')).href)})`,
    'console.log(JSON.stringify({ registered, ...where() }))',
  ].join('\n')
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  })
  // Nothing but a Node version's notice that module hooks are experimental.
  const notices = /ExperimentalWarning|--trace-warnings/
  expect(child.stderr.split('\n').filter((line) => line !== '' && !notices.test(line))).toEqual([])
  return JSON.parse(child.stdout) as {
    registered: boolean
    stack?: string
    inner?: string
    n?: number
  }
}

let root = ''
afterEach(() => rmSync(root, { recursive: true, force: true }))

function project(): string {
  root = mkdtempSync(join(tmpdir(), 'start-transform-'))
  writeFileSync(join(root, 'tsconfig.json'), readFileSync(join(repo, 'tsconfig.json')))
  writeFileSync(join(root, 'where.ts'), SOURCE)
  return root
}

describe('infra/start-transform.mjs (npm start without tsx keepNames)', () => {
  // One test for every Node version (nothing skipped): where Node has module.registerHooks the
  // transform registers and is checked whole; elsewhere it registers nothing (tsx transforms all).
  it('transpiles the sources without __name wrappers, stacks mapped to the .ts lines, a kept transform reused and an edit taking effect (where Node has module.registerHooks)', () => {
    const dir = project()
    const out = run(dir)
    if (!hooks) {
      expect(out).toEqual({ registered: false })
      return
    }
    expect(out).toMatchObject({ registered: true, inner: 'inner', n: 1 })
    expect(out.stack).toContain(`${join(dir, 'where.ts')}:6:`)
    const cache = join(dir, 'node_modules/.cache/turnline-start')
    const [first, ...more] = readdirSync(cache)
    expect(more).toEqual([])
    const file = join(cache, first as string)
    const code = readFileSync(file, 'utf8')
    expect(code).toContain('const inner = () => 1')
    expect(code).not.toContain('__name')
    // The kept transform is what loads: changed in place, the change shows.
    writeFileSync(file, code.replace('=> 1', '=> 2'))
    expect(run(dir).n).toBe(2)
    // An edit of the source is a new key: transpiled again, the edit runs.
    writeFileSync(join(dir, 'where.ts'), SOURCE.replace('=> 1', '=> 3'))
    expect(run(dir).n).toBe(3)
    expect(readdirSync(cache)).toHaveLength(2)
  })
})
