import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { planPatch } from '../../src/contract/patch-apply.ts'
import { parsePatch } from '../../src/contract/patch-parser.ts'

/**
 * Codex's own apply_patch scenarios (test/fixtures/apply-patch, see SOURCE.md there): the patch
 * applied to `input/` must give exactly `expected/`; a rejected patch must change nothing.
 */
const ROOT = new URL('../fixtures/apply-patch/scenarios/', import.meta.url).pathname

function filesUnder(dir: string): Record<string, string> {
  const files: Record<string, string> = {}
  const walk = (at: string) => {
    let names: string[]
    try {
      names = readdirSync(at)
    } catch {
      return
    }
    for (const name of names) {
      const path = join(at, name)
      if (statSync(path).isDirectory()) walk(path)
      else files[relative(dir, path)] = readFileSync(path, 'utf8')
    }
  }
  walk(dir)
  return files
}

/** Applies a patch the way the sandbox does: plan everything, then write; or write nothing. */
async function applied(patch: string, input: Record<string, string>) {
  const files = { ...input }
  const parsed = parsePatch(patch)
  if (!parsed.ok) return { files, error: parsed.message }
  const plan = await planPatch(parsed.ops, async (path) => files[path])
  if (!plan.ok) return { files, error: plan.message }
  for (const write of plan.writes) {
    if ('delete' in write) delete files[write.path]
    else files[write.path] = write.content
  }
  return { files, error: undefined }
}

const scenarios = readdirSync(ROOT).sort()

describe("Codex's apply_patch scenarios", () => {
  it('are all here', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(16)
  })

  it.each(scenarios)('%s', async (name) => {
    const dir = join(ROOT, name)
    const input = filesUnder(join(dir, 'input'))
    const expected = filesUnder(join(dir, 'expected'))
    const result = await applied(readFileSync(join(dir, 'patch.txt'), 'utf8'), input)
    expect(result.files).toEqual(expected)
    if (name.includes('_rejects_')) expect(result.error).toBeDefined()
    else expect(result.error).toBeUndefined()
  })
})
