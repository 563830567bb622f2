import { execFile } from 'node:child_process'
import { COMMAND_PATH } from './command-env.ts'

/** One measurement of a tenant's workspaces. */
export type Measurement =
  | { kind: 'bytes'; bytes: number }
  /** A folder the tenant's user cannot read hides what it holds: counted as over the quota. */
  | { kind: 'unreadable'; reason: string }
  /** The walk gave no figure: it ran past its time, or du ended without a total. */
  | { kind: 'failed'; reason: string }

/**
 * Bytes allocated on disk by the given workspaces, hard links counted once, symlinks never
 * followed, one filesystem: `du -s -x -c --files0-from=-` (GNU), run as the user the workspaces
 * belong to (the tenant's), so measuring never reads a tenant's tree with the runner's rights.
 * Sparse files count what they really occupy; `fallocate`d space counts in full. A walk longer
 * than `timeoutMs` is ended and `failed` (disk-usage-verdict.ts decides what that means for the
 * quota).
 */
export function measureWorkspaces(
  workspaces: readonly string[],
  user: { uid: number; gid: number } | undefined,
  timeoutMs: number,
): Promise<Measurement> {
  if (workspaces.length === 0) return Promise.resolve({ kind: 'bytes', bytes: 0 })
  return new Promise((resolve) => {
    // The folders go on du's standard input, NUL-separated: a tenant may have more workspaces
    // than fit on a command line (E2BIG would leave no total).
    const child = execFile(
      'du',
      ['-s', '-x', '-c', '-P', '-B1', '--files0-from=-'],
      {
        env: { PATH: COMMAND_PATH, LC_ALL: 'C' },
        timeout: timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        ...(user ? { uid: user.uid, gid: user.gid } : {}),
      },
      (error, stdout, stderr) => {
        if (error && 'killed' in error && error.killed) {
          return resolve({
            kind: 'failed',
            reason: `walking them took longer than ${timeoutMs / 1000} s (too many files and folders)`,
          })
        }
        const denied = stderr.split('\n').find((line) => /Permission denied/.test(line))
        if (denied) {
          return resolve({
            kind: 'unreadable',
            reason: `a folder in the workspace cannot be read by its own user, so its size is unknown (${denied.replace(/^du: /, '')})`,
          })
        }
        const total = /^(\d+)\s+total$/m.exec(stdout)
        // Files vanishing under the walk (a build cleaning up) only make du complain.
        if (total) return resolve({ kind: 'bytes', bytes: Number(total[1]) })
        const said = stderr.split('\n').find((line) => line.trim() !== '')
        const why = said?.replace(/^du: /, '') ?? (error ? error.message : 'no output')
        resolve({ kind: 'failed', reason: `du gave no total (${why})` })
      },
    )
    // du ended early (killed at the timeout) closes its input: the error comes with the exit.
    child.stdin?.on('error', () => {})
    child.stdin?.end(`${workspaces.join('\0')}\0`)
  })
}
