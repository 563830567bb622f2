import { execFile } from 'node:child_process'
import { COMMAND_PATH } from './command-env.ts'

/** One measurement of a tenant's workspaces. */
export type Measurement =
  | { ok: true; bytes: number }
  /** A folder the tenant's user cannot read hides what it holds: counted as over the quota. */
  | { ok: false; reason: string }

/** A walk taking longer than this keeps the last measurement (and says so in the log). */
const WALK_TIMEOUT_MS = 60_000

/**
 * Bytes allocated on disk by the given workspaces, hard links counted once, symlinks never
 * followed, one filesystem: `du -s -x -c` (GNU), run as the user the workspaces belong to (the
 * tenant's), so measuring never reads a tenant's tree with the runner's rights. Sparse files count
 * what they really occupy; `fallocate`d space counts in full.
 */
export function measureWorkspaces(
  workspaces: readonly string[],
  user: { uid: number; gid: number } | undefined,
): Promise<Measurement | undefined> {
  if (workspaces.length === 0) return Promise.resolve({ ok: true, bytes: 0 })
  return new Promise((resolve) => {
    execFile(
      'du',
      ['-s', '-x', '-c', '-P', '-B1', '--', ...workspaces],
      {
        env: { PATH: COMMAND_PATH, LC_ALL: 'C' },
        timeout: WALK_TIMEOUT_MS,
        maxBuffer: 16 * 1024 * 1024,
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      },
      (error, stdout, stderr) => {
        if (error && 'killed' in error && error.killed) return resolve(undefined)
        const denied = stderr.split('\n').find((line) => /Permission denied/.test(line))
        if (denied) {
          return resolve({
            ok: false,
            reason: `a folder in the workspace cannot be read by its own user, so its size is unknown (${denied.replace(/^du: /, '')}); make it readable (chmod u+rx)`,
          })
        }
        const total = /^(\d+)\s+total$/m.exec(stdout)
        // Files vanishing under the walk (a build cleaning up) only make du complain.
        resolve(total ? { ok: true, bytes: Number(total[1]) } : undefined)
      },
    )
  })
}
