import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'

const repo = join(import.meta.dirname, '..', '..')
const tsx = join(repo, 'node_modules/.bin/tsx')
const running = new Set<number>()

process.once('exit', () => {
  for (const group of running) {
    try {
      process.kill(-group, 'SIGKILL')
    } catch {
      // gone already
    }
  }
})

export interface NodeEntry {
  child: ChildProcess
  /** Everything it printed so far (stdout and stderr). */
  output(): string
  exited: Promise<number | null>
  /** Resolves with its URL once it prints `listening on …`; rejects when it exits first. */
  listening(): Promise<string>
  stop(): Promise<void>
  /** A crash: SIGKILL to its process group, nothing flushed or closed; resolves once it is gone. */
  crash(): Promise<void>
}

/** `npm start` (functions/entries/node.ts) as a real process with exactly this environment (+ PATH). */
export function startNodeEntry(env: Record<string, string>): NodeEntry {
  const child = spawn(tsx, ['functions/entries/node.ts'], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  const group = child.pid
  if (group !== undefined) running.add(group)
  let text = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  let done = false
  void exited.then(() => {
    done = true
  })
  return {
    child,
    output: () => text,
    exited,
    async listening() {
      const deadline = Date.now() + 30_000
      for (;;) {
        const match = /listening on (http:\/\/\S+)/.exec(text)
        if (match?.[1]) return match[1]
        if (done || Date.now() > deadline) throw new Error(`the server did not start:\n${text}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    },
    async crash() {
      if (group !== undefined && !done) process.kill(-group, 'SIGKILL')
      await exited
      await this.stop()
    },
    async stop() {
      if (group === undefined) return
      if (!done) {
        process.kill(-group, 'SIGTERM')
        const timer = setTimeout(() => {
          try {
            process.kill(-group, 'SIGKILL')
          } catch {
            // gone already
          }
        }, 8000)
        await exited
        clearTimeout(timer)
      }
      running.delete(group)
    },
  }
}
