/**
 * An earlier revision of this repository, extracted with `git archive` into a temporary folder,
 * so that bench/turn-cost.ts can run its Turnline variants from both revisions in one process and
 * one interleaved run. Its node_modules are this checkout's when both lock files are the same;
 * otherwise its own, installed from its lock file (`npm ci`, from npm's cache where it can), so a
 * revision whose dependencies differ still loads what it imported then.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
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
  await giveModules(root, commit)
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

/** This checkout's node_modules when the lock files match, else the revision's own install. */
async function giveModules(root: string, commit: string): Promise<void> {
  const lock = 'package-lock.json'
  const same = readFileSync(join(root, lock), 'utf8') === readFileSync(join(repo, lock), 'utf8')
  if (same) {
    await symlink(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir')
    return
  }
  process.stderr.write(`${commit}: its ${lock} differs from this checkout's; npm ci in ${root}\n`)
  execFileSync(
    'npm',
    ['ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'],
    { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] },
  )
}
