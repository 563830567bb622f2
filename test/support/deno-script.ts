import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { type CliResult, collect, repoRoot } from './cli-process.ts'

/**
 * `deno run` of a script of the repository with exactly `flags` (no prompt), its arguments
 * `args`, and an environment of PATH and HOME only; answers its exit code and output.
 */
export function runDenoScript(script: string, flags: string[], args: string[]): Promise<CliResult> {
  return collect(
    spawn(
      join(repoRoot, 'node_modules/.bin/deno'),
      ['run', ...flags, '--no-prompt', script, ...args],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          DENO_NO_UPDATE_CHECK: '1',
          NO_COLOR: '1',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  )
}
