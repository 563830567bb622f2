/**
 * An earlier revision of this repository, extracted with `git archive` into a temporary folder
 * (node_modules linked from this checkout), so that bench/turn-cost.ts can run its Turnline
 * variants from both revisions in one process and one interleaved run.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const repo = join(import.meta.dirname, '..', '..')

export interface BeforeTree {
  /** The revision as given and the commit it resolved to. */
  label: string
  root: string
  remove(): Promise<void>
}

export async function checkoutBefore(revision: string): Promise<BeforeTree> {
  const commit = execFileSync('git', ['rev-parse', '--short', `${revision}^{commit}`], {
    cwd: repo,
    encoding: 'utf8',
  }).trim()
  const root = await mkdtemp(join(tmpdir(), `turnline-${commit}-`))
  const archive = execFileSync('git', ['archive', '--format=tar', commit], {
    cwd: repo,
    maxBuffer: 512 * 1024 * 1024,
  })
  execFileSync('tar', ['-x', '-C', root], { input: archive })
  await symlink(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir')
  if (!existsSync(join(root, 'bench/support/turnline-variants.ts'))) {
    await rm(root, { recursive: true, force: true })
    throw new Error(`${revision} (${commit}) has no bench/support/turnline-variants.ts to run`)
  }
  return {
    label: `${revision === commit ? '' : `${revision} = `}${commit}`,
    root,
    remove: () => rm(root, { recursive: true, force: true }),
  }
}
