import { spawn } from 'node:child_process'
import type { HookCommandRunner } from '../../src/ports/hook-command-runner.ts'

/**
 * A HookCommandRunner over a real child process: `sh -c <command>` in `cwd`, payload on stdin,
 * hook variables added to the environment, the process group killed when the signal aborts.
 * `pids` lists every process started, so tests can check none is left running.
 */
export function shellHookRunner(cwd: string) {
  const pids: number[] = []
  const run: HookCommandRunner = (command, { stdin, env, signal }) =>
    new Promise((resolve, reject) => {
      const child = spawn('sh', ['-c', command], {
        cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      })
      if (child.pid !== undefined) pids.push(child.pid)
      const kill = () => {
        if (child.pid !== undefined && child.exitCode === null) {
          try {
            process.kill(-child.pid, 'SIGKILL')
          } catch {
            // already gone
          }
        }
      }
      signal.addEventListener('abort', kill, { once: true })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8')
      })
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8')
      })
      child.on('error', reject)
      child.on('close', (code, sig) => {
        signal.removeEventListener('abort', kill)
        resolve({ exitCode: code ?? (sig ? 128 : 1), stdout, stderr })
      })
      child.stdin.on('error', () => {})
      child.stdin.end(stdin)
    })
  return { run, pids }
}

/** True while a process with this pid exists. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
