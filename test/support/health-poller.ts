import { spawn } from 'node:child_process'
import { setPriority } from 'node:os'

/**
 * Polls `GET <url>/healthz` every `everyMs` from a process of its own (so the test process's own
 * work never delays a poll), each poll on a new connection, a poll started on schedule whether
 * or not the previous one answered, at a raised priority (as root; so the host's other load
 * does not delay the poller itself). `mark(label)` names the phase the next polls belong to.
 */
export interface Poll {
  phase: string
  /** Milliseconds since the poller started. */
  at: number
  ms: number
  status: number
}

export interface PollReport {
  polls: Poll[]
  /** Polls still unanswered when the poller stopped, with how long they had waited. */
  pending: Poll[]
  worst: Poll | undefined
}

const SCRIPT = `
const http = require('node:http')
const [url, everyMs] = [process.argv[1], Number(process.argv[2])]
const started = performance.now()
const polls = []
const pending = new Map()
let phase = 'start'
let next = 0
process.stdin.setEncoding('utf8')
process.stdin.on('data', (text) => {
  for (const line of text.split('\\n')) if (line.startsWith('mark ')) phase = line.slice(5)
})
function poll() {
  const id = next++
  const at = performance.now()
  const entry = { phase, at: Math.round(at - started), ms: 0, status: 0 }
  pending.set(id, entry)
  const done = (status) => {
    if (!pending.delete(id)) return
    entry.ms = Math.round((performance.now() - at) * 10) / 10
    entry.status = status
    polls.push(entry)
  }
  const request = http.get(url + '/healthz', { agent: false }, (response) => {
    response.resume()
    response.on('end', () => done(response.statusCode))
  })
  request.on('error', () => done(-1))
}
const timer = setInterval(poll, everyMs)
poll()
process.on('SIGTERM', () => {
  clearInterval(timer)
  const now = performance.now()
  const waiting = [...pending.values()].map((p) => ({ ...p, ms: Math.round(now - started - p.at) }))
  process.stdout.write(JSON.stringify({ polls, pending: waiting }), () => process.exit(0))
})
process.stdout.write('polling\\n')
`

export async function startHealthPoller(url: string, everyMs = 50) {
  const child = spawn(process.execPath, ['-e', SCRIPT, url, String(everyMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  if (child.pid !== undefined) setPriority(child.pid, -10)
  let output = ''
  child.stdout.setEncoding('utf8')
  child.stdout.on('data', (chunk: string) => {
    output += chunk
  })
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  while (!output.startsWith('polling\n')) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    if (child.exitCode !== null) throw new Error(`the health poller exited: ${output}`)
  }
  return {
    mark(phase: string): void {
      child.stdin.write(`mark ${phase}\n`)
    },
    async stop(): Promise<PollReport> {
      child.kill('SIGTERM')
      await exited
      const report = JSON.parse(output.slice('polling\n'.length)) as Omit<PollReport, 'worst'>
      const all = [...report.polls, ...report.pending]
      const worst = all.reduce<Poll | undefined>((a, b) => (a && a.ms >= b.ms ? a : b), undefined)
      return { ...report, worst }
    },
  }
}
