import type { WorktreeResult } from '../../src/contract/runner-answers.ts'
import { commandEnv } from './command-env.ts'
import type { CommandSandbox } from './command-sandbox.ts'
import { Refusal } from './refusal.ts'
import { withHeld } from './workspace-files.ts'
import { locate, type WorkspaceDir } from './workspace-walk.ts'

const GIT_TIMEOUT_MS = 60_000

/**
 * git in the workspace, sandboxed like any command: the repository is the tenant's (its hooks
 * and config run), so it never runs with the runner's rights.
 */
async function git(
  sandbox: CommandSandbox,
  workspace: string,
  args: string[],
): Promise<{ ok: boolean; out: string }> {
  const result = await sandbox.run(
    {
      argv: ['git', '-C', workspace, ...args],
      workspace,
      cwd: workspace,
      env: commandEnv({
        workspace,
        cwd: workspace,
        tty: false,
        passEnv: sandbox.settings.passEnv,
        source: process.env,
      }),
      network: false,
    },
    GIT_TIMEOUT_MS,
  )
  const ok = result.code === 0 && !result.timedOut
  return { ok, out: (ok ? result.stdout : result.stderr || result.stdout).trim() }
}

/**
 * Worktree isolation for a sub-agent spec with `isolation = "worktree"`: a git worktree at
 * `.vtcode/worktrees/<name>` on branch `vtcode/<name>`, so the child's edits stay out of the
 * parent's working tree until merged. Asking again for the same name returns it unchanged.
 */
export async function createWorktree(
  sandbox: CommandSandbox,
  ws: WorkspaceDir,
  name: string,
  ref?: string,
): Promise<WorktreeResult> {
  const workspace = ws.path
  // git answers with real paths as the sandbox sees them: the workspace is mounted at its own
  // path there, so the strings compare (the runner resolves none of git's paths by name).
  const top = await git(sandbox, workspace, ['rev-parse', '--show-toplevel'])
  if (!top.ok || top.out !== workspace) {
    throw new Refusal(
      'invalid_input',
      'worktree isolation needs the workspace to be a git repository (run `git init` and commit ' +
        'first); the workspace is not the top of one',
    )
  }
  const rel = `.vtcode/worktrees/${name}`
  const abs = `${workspace}/${rel}`
  const branch = `vtcode/${name}`
  const exists = withHeld(rel, (held) => {
    const place = locate(ws, rel, { followLinks: false, makeFolders: false }, held)
    return place.info !== undefined
  })
  if (exists) {
    const list = await git(sandbox, workspace, ['worktree', 'list', '--porcelain'])
    if (list.ok && list.out.split('\n').includes(`worktree ${abs}`)) {
      return { path: rel, branch, created: false }
    }
    throw new Refusal('conflict', `${rel} exists but is not a worktree of this repository`)
  }
  const head = await git(sandbox, workspace, [
    'rev-parse',
    '--verify',
    '--quiet',
    `${ref ?? 'HEAD'}^{commit}`,
  ])
  if (!head.ok) {
    throw new Refusal(
      'invalid_input',
      ref
        ? `unknown ref ${JSON.stringify(ref)}`
        : 'the repository has no commit yet to branch from',
    )
  }
  const branchExists = (
    await git(sandbox, workspace, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])
  ).ok
  const added = branchExists
    ? await git(sandbox, workspace, ['worktree', 'add', abs, branch])
    : await git(sandbox, workspace, ['worktree', 'add', '-b', branch, abs, head.out])
  if (!added.ok) throw new Refusal('conflict', `git worktree add failed: ${added.out}`)
  return { path: rel, branch, created: true }
}
