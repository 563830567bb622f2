import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'

export const repoRoot = new URL('../../', import.meta.url).pathname
/** The file package.json's "bin" names: what `npx turnline` runs. */
export const cliBin = join(repoRoot, 'cli/turnline.mjs')

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

export interface CliOptions {
  env?: Record<string, string>
  cwd?: string
  /** Written to stdin, which is then closed; without it stdin is empty (/dev/null). */
  input?: string
  timeoutMs?: number
}

/** Only what the command needs: no OPENAI_* or TURNLINE_* leaks in from the test's environment. */
export function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', ...extra }
}

/** Starts the real `turnline` binary (node + the bin file) as a child process. */
export function spawnCli(args: string[], options: CliOptions = {}): ChildProcess {
  return spawn(process.execPath, [cliBin, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: cliEnv(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  })
}

/**
 * Runs `turnline …` on a pseudo-terminal (util-linux `script`): its stdout and stderr are both
 * that terminal, so everything it writes, in order, is the result's `stdout` (newlines as the
 * terminal sends them, `\r\n`).
 */
export function runCliInTerminal(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`
  const command = [process.execPath, cliBin, ...args].map(quote).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: options.cwd ?? repoRoot,
    env: cliEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return collect(child, options)
}

/** Runs `turnline …` to its exit; fails the test with the output when it outlives the timeout. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const child = spawnCli(args, options)
  return collect(child, options)
}

export function collect(child: ChildProcess, options: CliOptions = {}): Promise<CliResult> {
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8')
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  if (options.input !== undefined) child.stdin?.end(options.input)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`turnline did not exit in time\nstdout:\n${stdout}\nstderr:\n${stderr}`))
    }, options.timeoutMs ?? 90_000)
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The bare ThreadEvent lines of `--json` output, parsed. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}
