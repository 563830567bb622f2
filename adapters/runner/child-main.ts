/**
 * The reference runner as the child process of a Turnline server (`npm start`) or of the
 * `turnline` command's embedded engine, started by `runner-child.ts` with an environment of its
 * own — PATH and the values of TURNLINE_SANDBOX_ENV's names, nothing of the server's — so that
 * nothing that makes the runner read a file as itself (`/proc/self/environ`) can reach the
 * server's secrets.
 *
 * stdin: one JSON line (runner-child-protocol.ts: root, secret, callback URL, sandbox settings),
 * then nothing; its end means the parent is gone (however it died): every command is ended and
 * the process exits. SIGTERM does the same; SIGINT is left to the parent.
 * stdout: one JSON line, `{"listening","pid","sandbox"}` once it accepts requests (its sandbox
 * probe passed), then `{"egress"}` once its egress probe has ended (commands allowed the network
 * wait for that meanwhile); or `{"error":{"code","message"}}` when it cannot start (then it
 * exits non-zero).
 * stderr: the runner's log, one operator log line each (runner-log.ts); with `"log_level":"warn"`
 * only its warnings and faults.
 */
import { RunnerChildConfigSchema } from './runner-child-protocol.ts'
import { runnerStderrLog } from './runner-log.ts'
import { type RunningRunner, startRunner } from './runner-server.ts'
import { SandboxUnavailable } from './sandbox-probe.ts'

// The parent reads one line; if it is gone, writes must not kill us before the commands end.
process.stdout.on('error', () => {})

function answer(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`)
}

function fail(code: 'sandbox_unavailable' | 'start_failed', message: string): never {
  answer({ error: { code, message } })
  process.exit(code === 'sandbox_unavailable' ? 3 : 2)
}

/** The first line of stdin, or undefined when stdin ends before one arrives. */
function firstLine(): Promise<string | undefined> {
  return new Promise((resolve) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8')
      const end = text.indexOf('\n')
      if (end < 0) return
      process.stdin.off('data', onData)
      process.stdin.off('end', onEnd)
      resolve(text.slice(0, end))
    }
    const onEnd = () => resolve(undefined)
    process.stdin.on('data', onData)
    process.stdin.once('end', onEnd)
  })
}

let runner: RunningRunner | undefined
let stopping = false
function stop(): void {
  if (stopping) return
  stopping = true
  const closed = runner ? runner.close() : Promise.resolve()
  void closed.then(
    () => process.exit(0),
    () => process.exit(1),
  )
}
process.on('SIGTERM', stop)
// A terminal's Ctrl-C reaches the whole process group: the parent decides (it may still need
// the runner, e.g. to cancel), then stops it with SIGTERM or by exiting.
process.on('SIGINT', () => {})

const line = await firstLine()
if (line === undefined) process.exit(0)
let json: unknown
try {
  json = JSON.parse(line)
} catch {
  fail('start_failed', 'the first line on stdin is not JSON')
}
const parsed = RunnerChildConfigSchema.safeParse(json)
if (!parsed.success) fail('start_failed', `invalid settings on stdin: ${parsed.error.message}`)
const config = parsed.data

// From here on stdin carries nothing; its end is the parent's.
process.stdin.on('end', stop)
process.stdin.on('error', stop)
process.stdin.resume()

try {
  runner = await startRunner({
    root: config.root,
    secret: config.secret,
    sandbox: config.sandbox,
    ...(config.project ? { project: config.project } : {}),
    ...(config.prepare_tenants ? { prepareTenants: config.prepare_tenants } : {}),
    ...(config.callback_url ? { callbackUrl: config.callback_url } : {}),
    log: (entry) => {
      // The parent reports a missing or weakened sandbox (or network) itself, from the status.
      const reported = ['sandbox_unavailable', 'sandbox_weakened', 'egress_unavailable']
      if (reported.includes(String(entry.event))) return
      // The `turnline` command's runner: its warnings and faults only, as its engine's.
      if (config.log_level === 'warn' && (entry.level ?? 'info') === 'info') return
      runnerStderrLog(entry)
    },
  })
} catch (error) {
  if (error instanceof SandboxUnavailable) fail('sandbox_unavailable', error.reason)
  fail('start_failed', error instanceof Error ? error.message : String(error))
}
if (stopping) {
  // The parent left (or a signal came) while the runner was starting.
  await runner.close()
  process.exit(0)
}
answer({ listening: runner.url, pid: process.pid, sandbox: runner.sandbox })
void runner.egress.then((egress) => answer({ egress }))
