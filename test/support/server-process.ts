import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from './cli-process.ts'

export interface ServerProcess {
  url: string
  child: ChildProcess
  output(): string
  stop(): Promise<void>
}

/**
 * `npm start`'s entry (functions/entries/node.ts) as a child process on a free port, with only
 * the given environment. Resolves once it prints where it listens.
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(join(repoRoot, 'node_modules/.bin/tsx'), ['functions/entries/node.ts'], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let text = ''
  const collect = (chunk: Buffer) => {
    text += chunk.toString('utf8')
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exited
      clearTimeout(timer)
    }
  }
  for (let i = 0; i < 600; i++) {
    const match = /listening on (http:\/\/\S+)/.exec(text)
    if (match?.[1]) return { url: match[1], child, output: () => text, stop }
    if (child.exitCode !== null) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await stop()
  throw new Error(`the server did not start:\n${text}`)
}
