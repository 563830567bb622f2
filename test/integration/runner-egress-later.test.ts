import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RunnerChild, startRunnerChild } from '../../adapters/runner/runner-child.ts'
import { RunnerChildAnswerSchema } from '../../adapters/runner/runner-child-protocol.ts'
import { spawnRunnerProcess } from '../../adapters/runner/runner-process.ts'
import { SandboxUnavailable } from '../../adapters/runner/sandbox-probe.ts'
import { DEFAULT_SANDBOX_SETTINGS } from '../../adapters/runner/sandbox-settings.ts'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import { runnerProcessEnv } from '../../functions/runner-process-env.ts'
import type { ExecSnapshot, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { cmdlineOf } from '../support/proc-tree.ts'
import { value } from '../support/runner-results.ts'

/**
 * The runner child answers ready once its sandbox probe has passed; its egress probe, which
 * cannot refuse a start, ends later (adapters/runner/probed-networks.ts). Real runner processes,
 * real bubblewrap: the egress probe's processes are caught and stopped (SIGSTOP) while it runs,
 * so the runner is ready with its egress probe provably unfinished. A command allowed the
 * network then waits for it, a command without the network does not, and the egress status
 * comes on its own line once the probe is let go on.
 */
const SECRET = 'runner-egress-later-secret-0123456789'
const settings = { ...DEFAULT_SANDBOX_SETTINGS, mode: 'require' as const }
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-egress-later-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(dir, 0o711)
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** Children of `pid` through /proc's `children` lists (fast enough to catch a short process). */
function childrenOf(pid: number): number[] {
  const found: number[] = []
  let tasks: string[] = []
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return found
  }
  for (const task of tasks) {
    try {
      const text = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim()
      if (text) found.push(...text.split(' ').map(Number))
    } catch {
      // the task ended
    }
  }
  return found
}

function treeOf(pid: number): number[] {
  const found = [pid]
  for (let i = 0; i < found.length; i++) found.push(...childrenOf(found[i] as number))
  return found
}

/** The egress probe's client asks the relay at the sandbox's loopback (command-networks.ts). */
const isEgressProbe = (pid: number) => /TCP:127\.0\.0\.1:\d+/.test(cmdlineOf(pid))

/**
 * Starts a runner child and stops its egress probe's processes as soon as they show; another
 * start when the probe ended before it was seen (a few tries).
 */
async function runnerWithEgressProbeStopped(
  root: string,
): Promise<{ runner: RunnerChild; stopped: number[] }> {
  for (let attempt = 0; attempt < 5; attempt++) {
    await mkdir(root, { recursive: true })
    const spawned = spawnRunnerProcess(runnerProcessEnv(process.env, []))
    let stopped: number[] = []
    let watching = true
    const watch = () => {
      if (!watching) return
      const probe = childrenOf(spawned.child.pid ?? -1)
        .flatMap(treeOf)
        .find(isEgressProbe)
      if (probe === undefined) {
        setImmediate(watch)
        return
      }
      stopped = treeOf(probe)
      for (const pid of stopped) process.kill(pid, 'SIGSTOP')
      // What it started meanwhile is stopped too.
      const more = treeOf(probe).filter((pid) => !stopped.includes(pid))
      for (const pid of more) process.kill(pid, 'SIGSTOP')
      stopped.push(...more)
      watching = false
    }
    setImmediate(watch)
    const runner = await startRunnerChild(
      { root, secret: SECRET, sandbox: settings, env: spawned.env },
      spawned,
    )
    watching = false
    if (stopped.length > 0) return { runner, stopped }
    await runner.close()
  }
  throw new Error('the egress probe ended each time before it could be caught')
}

/** Whether `promise` has settled, after the jobs queued so far ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('a runner whose egress probe has not ended', () => {
  it('is ready; a command allowed the network waits for the probe, one without does not', async () => {
    const root = join(dir, 'waits')
    const { runner, stopped } = await runnerWithEgressProbeStopped(root)
    try {
      expect(await settled(runner.egress)).toBe(false)
      const client = new HttpSandboxRunner({ url: runner.url, secret: SECRET })
      const scope: SandboxScope = { tenant: 'acme', sessionId: 'egress-later' }
      const withNetwork = client.start(scope, {
        requestId: 'req_with_network',
        toolCallId: 'call_with_network',
        cmd: "touch started-with-network; printf 'proxy=%s ' \"$HTTPS_PROXY\"; curl -s -o /dev/null -w 'status=%{http_code}' http://10.255.255.1/",
        tty: false,
        yieldTimeMs: 10_000,
        maxOutputBytes: 4096,
        network: true,
      })
      const without = value(
        await client.start(scope, {
          requestId: 'req_without_network',
          toolCallId: 'call_without_network',
          cmd: 'printf \'proxy=%s done\' "$HTTPS_PROXY"',
          tty: false,
          yieldTimeMs: 10_000,
          maxOutputBytes: 4096,
        }),
      )
      expect(without.state).toEqual({ status: 'exited', exitCode: 0 })
      expect(without.output.head + without.output.tail).toBe('proxy= done')
      // The command allowed the network, asked for first, has not started: the probe is stopped.
      expect(await settled(withNetwork)).toBe(false)
      expect(existsSync(join(root, 'acme', 'egress-later', 'started-with-network'))).toBe(false)
      expect(await settled(runner.egress)).toBe(false)

      for (const pid of stopped) process.kill(pid, 'SIGCONT')
      expect(await runner.egress).toEqual({ mode: 'proxy' })
      const started: ExecSnapshot = value(await withNetwork)
      const done =
        started.state.status === 'running'
          ? value(
              await client.wait(scope, {
                execSessionId: started.execSessionId,
                timeoutMs: 20_000,
                maxOutputBytes: 4096,
                since: 0,
              }),
            )
          : started
      // Through the egress proxy, which refuses a private address.
      expect(done.output.head + done.output.tail).toBe('proxy=http://127.0.0.1:3128 status=403')
    } finally {
      for (const pid of stopped) {
        try {
          process.kill(pid, 'SIGCONT')
        } catch {
          // gone
        }
      }
      await runner.close()
    }
  })
})

describe('the ready line of a runner child', () => {
  it('may carry the egress status itself (a runner that probed it before answering)', () => {
    const line = {
      listening: 'http://127.0.0.1:4000',
      pid: 7,
      sandbox: { isolation: 'none', reason: 'TURNLINE_SANDBOX=off', uid: 0, limits: null },
      egress: { mode: 'none', reason: 'commands are not sandboxed' },
    }
    const parsed = RunnerChildAnswerSchema.parse(line)
    expect('egress' in parsed && parsed.egress).toEqual(line.egress)
    const { egress: _, ...without } = line
    const later = RunnerChildAnswerSchema.parse(without)
    expect('listening' in later && later.egress).toBeUndefined()
  })

  it('is never sent when the sandbox is refused: the start fails', async () => {
    if (process.getuid?.() !== 0) {
      throw new Error('run as root: only a runner running as root drops to another user')
    }
    // A root the sandbox user cannot get to (a private parent): bubblewrap cannot bind it.
    const hidden = join(dir, 'private')
    await mkdir(join(hidden, 'root'), { recursive: true })
    await chmod(hidden, 0o700)
    const refused = await startRunnerChild({
      root: join(hidden, 'root'),
      secret: SECRET,
      sandbox: settings,
      env: runnerProcessEnv(process.env, []),
    }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(SandboxUnavailable)
  })
})
