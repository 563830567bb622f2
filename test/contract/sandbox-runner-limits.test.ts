import { spawnSync } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { type RunnerProcess, startRunnerProcess } from '../support/runner-process.ts'
import { refusal, value } from '../support/runner-results.ts'
import {
  curlCommand,
  runnerWithClient,
  runToEnd,
  startHttpTarget,
} from '../support/sandbox-commands.ts'

/** The sandbox's resource limits and network policies, each seen to take effect. */
const secret = 'limits-runner-secret-0123456789'
let root: string
const started: RunnerProcess[] = []
let sessions = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `limits-${++sessions}` })

async function runner(env: Record<string, string>): Promise<HttpSandboxRunner> {
  const { process, client } = await runnerWithClient({
    root: join(root, `r${started.length}`),
    secret,
    env,
  })
  started.push(process)
  return client
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnline-limits-'))
  // The runners' roots are below: the sandbox user must get through (mkdtemp makes it 0700).
  await chmod(root, 0o711)
})

afterAll(async () => {
  await Promise.all(started.map((r) => r.stop()))
  if (root) await rm(root, { recursive: true, force: true })
})

describe('resource limits', () => {
  let client: HttpSandboxRunner
  beforeAll(async () => {
    client = await runner({
      TURNLINE_SANDBOX_CPU_SECONDS: '1',
      TURNLINE_SANDBOX_MEMORY_MB: '256',
      TURNLINE_SANDBOX_MAX_PROCESSES: '24',
      TURNLINE_SANDBOX_FILE_SIZE_MB: '1',
    })
  })

  it('the CPU-time limit kills a busy loop (SIGXCPU) and says so', async () => {
    const { exitCode, output } = await runToEnd(client, fresh(), 'while :; do :; done')
    expect(exitCode).toBe(152)
    expect(output).toContain('CPU-time limit of 1 s')
  })

  it('the memory limit stops a command that keeps allocating', async () => {
    // A runner of its own whose CPU-time limit is far away: on a slow machine the 1 s limit of
    // the suite's runner can end the allocation before it reaches 256 MB, and decide the test.
    const client = await runner({
      TURNLINE_SANDBOX_CPU_SECONDS: '600',
      TURNLINE_SANDBOX_MEMORY_MB: '256',
    })
    const { exitCode, output } = await runToEnd(client, fresh(), 'tail /dev/zero')
    expect(exitCode).not.toBe(0)
    expect(exitCode, 'not the CPU-time limit').not.toBe(152)
    expect(output).toMatch(/memory exhausted|Cannot allocate memory/i)
    const shown = await runToEnd(client, fresh(), 'ulimit -v')
    expect(shown.output.trim()).toBe(String(256 * 1024))
  })

  it('the wall-clock limit ends a command, and background processes left behind', async () => {
    // A runner of its own: on a busy machine 1 s of CPU can take several seconds of wall clock.
    const client = await runner({ TURNLINE_SANDBOX_TIME_LIMIT_SECONDS: '3' })
    const scope = fresh()
    const began = Date.now()
    const { exitCode, output } = await runToEnd(client, scope, 'echo begin; sleep 30')
    expect(exitCode).toBe(143)
    expect(output).toContain('begin\n')
    expect(output).toContain('time limit of 3 s')
    expect(Date.now() - began).toBeLessThan(15_000)

    // The command exits at once; a background child holds its output until the limit.
    const start = value(
      await client.start(scope, {
        requestId: `req_limits_bg_${Date.now()}`,
        toolCallId: 'call_bg',
        cmd: 'sleep 30 & echo left-behind',
        tty: false,
        yieldTimeMs: 1000,
        maxOutputBytes: 4096,
      }),
    )
    expect(start.state).toEqual({ status: 'exited', exitCode: 0 })
    expect(start.spool.complete).toBe(false)
    // Polled until the limit has ended the child (bounded, not measured: a slow machine waits).
    let complete = false
    for (const until = Date.now() + 30_000; !complete && Date.now() < until; ) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const poll = value(
        await client.poll(scope, {
          execSessionId: start.execSessionId,
          yieldTimeMs: 0,
          maxOutputBytes: 4096,
        }),
      )
      complete = poll.spool.complete
    }
    expect(complete).toBe(true)
  })

  it('the process limit stops a fork bomb', async () => {
    const { output } = await runToEnd(
      client,
      fresh(),
      'for i in $(seq 64); do sleep 2 & done; wait',
    )
    expect(output).toMatch(/fork/i)
  })

  it('the file-size limit stops a command writing a huge file (SIGXFSZ)', async () => {
    const { output } = await runToEnd(
      client,
      fresh(),
      'head -c 2097152 /dev/zero > big; echo "rc=$?"; wc -c < big',
    )
    expect(output).toMatch(/rc=153\n1048576\n/)
  })
})

describe('memory-backed folders', () => {
  it('/tmp, /dev/shm and /dev together hold no more than the memory limit (ENOSPC, read-only /dev)', async () => {
    const client = await runner({ TURNLINE_SANDBOX_MEMORY_MB: '64' })
    // Each write asks for more than the whole limit; what each folder kept is then summed.
    const write = (file: string) =>
      `said=$( { head -c 100M /dev/zero > ${file}; } 2>&1 ); echo "${file}: rc=$? $said"`
    const { output, exitCode } = await runToEnd(
      client,
      fresh(),
      [
        write('/tmp/fill'),
        write('/dev/shm/fill'),
        write('/dev/fill'),
        'df -B1 --output=target,used /tmp /dev/shm /dev | tail -n +2',
      ].join('; '),
    )
    expect(exitCode, output).toBe(0)
    expect(output).toMatch(/^\/tmp\/fill: rc=1 .*No space left on device/m)
    expect(output).toMatch(/^\/dev\/shm\/fill: rc=1 .*No space left on device/m)
    expect(output).toMatch(/^\/dev\/fill: rc=2 .*Read-only file system/m)
    const used = new Map(
      [...output.matchAll(/^(\/\S*)\s+(\d+)$/gm)].map((m) => [m[1], Number(m[2])] as const),
    )
    expect([...used.keys()].sort()).toEqual(['/dev', '/dev/shm', '/tmp'])
    const total = [...used.values()].reduce((a, b) => a + b, 0)
    expect(total).toBeLessThanOrEqual(64 * 1024 * 1024)
    // Both tmpfs took what they were given: the split is ¾ for /tmp and ¼ for /dev/shm.
    expect(used.get('/tmp')).toBe(48 * 1024 * 1024)
    expect(used.get('/dev/shm')).toBe(16 * 1024 * 1024)
  })
})

describe('network policy', () => {
  it("a runner removes the proxy folders of killed runners, never a live runner's", async () => {
    const dead = spawnSync('true').pid
    const live = process.pid
    const stale = join(tmpdir(), `turnline-proxy-${dead}-stale`)
    const kept = join(tmpdir(), `turnline-proxy-${live}-kept`)
    await mkdir(join(stale, 'old.sock'), { recursive: true })
    await mkdir(kept, { recursive: true })
    try {
      await runner({})
      await expect(stat(stale)).rejects.toThrow()
      expect((await stat(kept)).isDirectory()).toBe(true)
      const own = (await readdir(tmpdir())).filter((n) => /^turnline-proxy-\d+-/.test(n))
      expect(own.length).toBeGreaterThan(1)
    } finally {
      await rm(stale, { recursive: true, force: true })
      await rm(kept, { recursive: true, force: true })
    }
  })

  it('off: a session asking for the network is refused, with the reason', async () => {
    const client = await runner({ TURNLINE_SANDBOX_NETWORK: 'off' })
    const result = await client.start(fresh(), {
      requestId: `req_net_off_${Date.now()}`,
      toolCallId: 'call_net',
      cmd: 'true',
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 64,
      network: true,
    })
    expect(refusal(result)).toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('TURNLINE_SANDBOX_NETWORK=off'),
    })
  })

  it('on: every command has the network, through the egress proxy', async () => {
    const target = await startHttpTarget('hello from the allowlisted host')
    try {
      const client = await runner({
        TURNLINE_SANDBOX_NETWORK: 'on',
        TURNLINE_EGRESS_ALLOW: `127.0.0.1:${target.port}`,
      })
      const { output } = await runToEnd(
        client,
        fresh(),
        curlCommand(`http://127.0.0.1:${target.port}/`, "--noproxy ''"),
      )
      expect(output).toMatch(/hello from the allowlisted host\n+status=200/)
      expect(target.requests()).toBe(1)
    } finally {
      await target.close()
    }
  })
})

describe('without a sandbox', () => {
  it('TURNLINE_SANDBOX=off: unsandboxed (and said loudly), but the environment allow-list and limits hold', async () => {
    const planted = 'sk-planted-unsandboxed-runner'
    const before = started.length
    const client = await runner({
      TURNLINE_SANDBOX: 'off',
      TURNLINE_SANDBOX_CPU_SECONDS: '1',
      OPENAI_API_KEY: planted,
    })
    expect(started[before]?.output()).toMatch(/WARNING: commands run UNSANDBOXED/)
    const env = await runToEnd(client, fresh(), 'env')
    expect(env.output).not.toContain(planted)
    expect(env.output).not.toContain(secret)
    const busy = await runToEnd(client, fresh(), 'while :; do :; done')
    expect(busy.exitCode).toBe(152)
    // It starts in its workdir (through the runner's descriptor of it, not by its name).
    const scope = fresh()
    value(await client.writeFile(scope, { path: 'sub/here.txt', content: 'in sub\n' }))
    const inSub = value(
      await client.start(scope, {
        requestId: `req_unsandboxed_workdir_${Date.now()}`,
        toolCallId: 'call_workdir',
        cmd: 'cat here.txt; pwd -P',
        workdir: 'sub',
        tty: false,
        yieldTimeMs: 5000,
        maxOutputBytes: 4096,
      }),
    )
    const workspace = join(root, `r${before}`, scope.tenant, scope.sessionId)
    expect(inSub.output.head).toBe(`in sub\n${join(workspace, 'sub')}\n`)
  })

  it('TURNLINE_SANDBOX=require: a runner whose sandbox cannot work refuses to start, saying why', async () => {
    // The sandbox user cannot get through a private (0700) folder to the workspaces.
    const hidden = join(root, 'private')
    await mkdir(hidden, { recursive: true })
    await chmod(hidden, 0o700)
    if (process.getuid?.() !== 0) {
      throw new Error('run as root: only a runner running as root drops to another user')
    }
    await expect(
      startRunnerProcess({
        root: join(hidden, 'runner'),
        secret,
        env: { TURNLINE_SANDBOX: 'require' },
      }),
    ).rejects.toThrow(/no working command sandbox.*must be able to reach/s)
  })
})
