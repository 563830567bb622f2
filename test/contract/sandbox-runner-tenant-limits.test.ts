import { chmod, chown, lstat, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { refusal, value } from '../support/runner-results.ts'
import { runnerWithClient, runToEnd } from '../support/sandbox-commands.ts'
import { tenantUid } from '../support/tenant-uid.ts'

/**
 * One tenant attacks what all tenants share — processes, memory, disk, the runner's spool and
 * its command slots — and stops at its own limits while another tenant still works. Small limits
 * keep the machine usable; every wait is for an event (a line of output, an exit), not a time.
 */
const secret = 'tenant-limits-runner-secret-0123456789'
let root: string
let runner: RunnerProcess
let client: HttpSandboxRunner
let sessions = 0
let requests = 0
const scope = (tenant: string): SandboxScope => ({ tenant, sessionId: `lim-${++sessions}` })

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: tenant limits need a root runner')
  root = await mkdtemp(join(tmpdir(), 'turnline-tenant-limits-'))
  await chmod(root, 0o711)
  ;({ process: runner, client } = await runnerWithClient({
    root: join(root, 'runner'),
    secret,
    env: {
      TURNLINE_SANDBOX_MAX_PROCESSES: '200',
      TURNLINE_SANDBOX_TENANT_PROCESSES: '48',
      TURNLINE_SANDBOX_MEMORY_MB: '1024',
      TURNLINE_SANDBOX_TENANT_MEMORY_MB: '256',
      TURNLINE_SANDBOX_TENANT_COMMANDS: '3',
      TURNLINE_SANDBOX_TENANT_DISK_MB: '32',
      TURNLINE_SANDBOX_DISK_CHECK_SECONDS: '1',
      TURNLINE_SANDBOX_SPOOL_MB: '1',
    },
  }))
})

afterAll(async () => {
  await runner?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

/** Starts a command and returns once its output holds `marker` (or it exited). */
async function startUntil(where: SandboxScope, cmd: string, marker: string, on = client) {
  const started = value(
    await on.start(where, {
      requestId: `req_tenant_limits_${++requests}`,
      toolCallId: `call_${requests}`,
      cmd,
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 65_536,
    }),
  )
  let output = `${started.output.head}${started.output.tail}`
  let state = started.state
  for (let i = 0; i < 200 && !output.includes(marker) && state.status === 'running'; i++) {
    const poll = value(
      await on.poll(where, {
        execSessionId: started.execSessionId,
        yieldTimeMs: 250,
        maxOutputBytes: 65_536,
      }),
    )
    output += `${poll.output.head}${poll.output.tail}`
    state = poll.state
  }
  return { id: started.execSessionId, output, state }
}

/** The refusal of a start that must be refused. */
async function refusedStart(where: SandboxScope) {
  const start = await client.start(where, {
    requestId: `req_tenant_limits_${++requests}`,
    toolCallId: `call_${requests}`,
    cmd: 'echo never',
    tty: false,
    yieldTimeMs: 0,
    maxOutputBytes: 64,
  })
  return refusal(start)
}

const hold = (n: number) => `for i in $(seq ${n}); do sleep 600 & done; echo "held ${n}"; wait`

/**
 * Holds 30 processes in one command of a tenant, then tries 30 more in another; `meanwhile` runs
 * while the tenant still holds every process it got (both commands' sleeps).
 */
async function forkBomb(on: HttpSandboxRunner, tenant: string, meanwhile: () => Promise<void>) {
  const first = scope(tenant)
  const holding = await startUntil(first, hold(30), 'held 30', on)
  expect(holding.output).toContain('held 30')
  const second = scope(tenant)
  try {
    const bomb = await runToEnd(on, second, `${hold(30)} 2>&1; echo "exit=$?"`)
    // The first command still runs, holding its 30: the tenant is at its limit now.
    const still = value(
      await on.poll(first, { execSessionId: holding.id, yieldTimeMs: 0, maxOutputBytes: 1024 }),
    )
    expect(still.state.status).toBe('running')
    await meanwhile()
    // What it did start lives on in its sandbox: ended here, so it holds nothing afterwards.
    await on.close(second, bomb.id)
    return bomb
  } finally {
    value(await on.close(first, holding.id))
  }
}

/**
 * The second command of the bomb cannot fork; another tenant forks 30 processes while the bomber
 * still holds all it got (a limit shared by every tenant would refuse those too). Each runner
 * gets a tenant name of its own: runners on different roots give one name the same uid.
 */
async function bombStopsThere(on: HttpSandboxRunner, bomber: string) {
  let other = ''
  const second = await forkBomb(on, bomber, async () => {
    other = (
      await runToEnd(
        on,
        scope('bystander'),
        'for i in $(seq 30); do sleep 0.2 & done; wait; echo forked-30',
      )
    ).output
  })
  expect(second.output).toMatch(/fork|Resource temporarily unavailable/i)
  expect(second.output).not.toContain('held 30')
  expect(other).toContain('forked-30')
}

describe('per-tenant limits on the host', () => {
  it('gives each tenant a uid of its own', async () => {
    const a = scope('uid-a')
    const b = scope('uid-b')
    const ua = await runToEnd(client, a, 'id -u')
    const ub = await runToEnd(client, b, 'id -u')
    expect(Number(ua.output)).toBe(await tenantUid(join(root, 'runner'), 'uid-a'))
    expect(Number(ub.output)).toBe(await tenantUid(join(root, 'runner'), 'uid-b'))
    expect(ua.output).not.toBe(ub.output)
    expect(runner.output()).toMatch(/"tenant_limits":\{/)
  })

  it("a tenant's fork bomb stops at the tenant's process limit, across its commands; another tenant still forks", async () => {
    // Each command alone is far below its own limit (200); together they pass the tenant's 48.
    await bombStopsThere(client, 'bomber')
  })

  it("a tenant's memory stops at the tenant's limit across its commands; another tenant still allocates", async () => {
    const allocate = (mb: number) =>
      `python3 -c "import sys,time; b=b'x'*(${mb}<<20); print('allocated', flush=True); time.sleep(600)"`
    const first = scope('hog')
    const holding = await startUntil(first, allocate(160), 'allocated')
    expect(holding.output).toContain('allocated')
    const again = scope('hog')
    const second = await startUntil(again, allocate(160), 'allocated')
    // The tenant's cgroup cannot hold both: the kernel ends one of them (SIGKILL, exit 137).
    const survivor = second.state.status === 'running'
    const ended = survivor
      ? value(
          await client.wait(first, {
            execSessionId: holding.id,
            timeoutMs: 20_000,
            maxOutputBytes: 1024,
            since: 0,
          }),
        ).state
      : second.state
    expect(ended).toEqual({ status: 'exited', exitCode: 137 })
    // The survivor holds its 160 MiB of the tenant's 256 while another tenant allocates as much:
    // both go on (one limit for every tenant would end one of them).
    const [kept, keptId] = survivor ? [again, second.id] : [first, holding.id]
    const running = async (where: SandboxScope, id: string) =>
      value(await client.poll(where, { execSessionId: id, yieldTimeMs: 0, maxOutputBytes: 1024 }))
        .state.status
    expect(await running(kept, keptId)).toBe('running')
    const frugal = scope('frugal')
    const other = await startUntil(frugal, allocate(160), 'allocated')
    expect(other.output).toContain('allocated')
    // A kill by the kernel's OOM handling may land a moment after the allocation: a short wait
    // on each for an end that must not come.
    for (const [where, id] of [
      [kept, keptId],
      [frugal, other.id],
    ] as const) {
      const waited = value(
        await client.wait(where, { execSessionId: id, timeoutMs: 1500, maxOutputBytes: 1024 }),
      )
      expect(waited.state.status).toBe('running')
    }
    value(await client.close(frugal, other.id))
    await client.close(first, holding.id)
    await client.close(again, second.id)
  })

  it("a command's /tmp counts against the tenant's memory: filling it stops at the tenant's limit", async () => {
    // /tmp may hold 768 MiB (¾ of the command's 1024); the tenant has 256 MiB in all.
    const filler = scope('tmp-filler')
    const { exitCode, output } = await runToEnd(
      client,
      filler,
      'head -c 400M /dev/zero > /tmp/fill; echo "rc=$?"; du -sb /tmp',
      { timeoutMs: 60_000 },
    )
    expect(exitCode, output).toBe(137)
    expect(output).not.toContain('rc=0')
    const held = /^(\d+)\s+\/tmp$/m.exec(output)?.[1]
    if (held !== undefined) expect(Number(held)).toBeLessThanOrEqual(256 * 1024 * 1024)
    // The memory went with the command's sandbox: the tenant's next command runs.
    expect((await runToEnd(client, scope('tmp-filler'), 'echo again')).output).toBe('again\n')
  })

  it("the running-commands cap refuses a tenant's next start (409, naming the setting); another tenant still starts", async () => {
    const mine = [scope('busy'), scope('busy'), scope('busy')]
    const held = []
    for (const where of mine) held.push(await startUntil(where, 'echo up; sleep 600', 'up'))
    try {
      expect(await refusedStart(scope('busy'))).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('TURNLINE_SANDBOX_TENANT_COMMANDS=3'),
      })
      const other = await runToEnd(client, scope('idle'), 'echo still-works')
      expect(other.output).toBe('still-works\n')
    } finally {
      for (const [i, where] of mine.entries()) await client.close(where, held[i]!.id)
    }
    // Closed commands give their slots back.
    expect((await runToEnd(client, scope('busy'), 'echo again')).output).toBe('again\n')
  })

  it('the spool stops at its cap: the runner says so and ends the command', async () => {
    const { exitCode, output, id } = await runToEnd(client, scope('chatty'), 'cat /dev/zero')
    expect(exitCode).not.toBe(0)
    expect(output).toContain('[runner] stopped')
    expect(output).toContain('TURNLINE_SANDBOX_SPOOL_MB')
    const spool = join(root, 'runner', 'chatty', `lim-${sessions}`, '.vtcode/context/tool_outputs')
    const size = (await stat(join(spool, `write_stdin_${id}.txt`))).size
    expect(size).toBeLessThan(1024 * 1024 + 1024)
    expect(size).toBeGreaterThanOrEqual(1024 * 1024)
  })

  it("a tenant's fallocate past its disk quota: its next command and file write are refused, naming the quota; another tenant still works", async () => {
    const filler = scope('filler')
    const made = await runToEnd(client, filler, 'fallocate -l 48M big && echo allocated')
    expect(made.output).toBe('allocated\n')
    expect(await refusedStart(scope('filler'))).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(
        /over its disk quota of 32 MiB \(TURNLINE_SANDBOX_TENANT_DISK_MB\)/,
      ),
    })
    const write = await client.writeFile(filler, { path: 'more.txt', content: 'x' })
    expect(refusal(write).message).toContain('TURNLINE_SANDBOX_TENANT_DISK_MB')

    const other = scope('neighbour')
    expect((await runToEnd(client, other, 'echo fine')).output).toBe('fine\n')
    value(await client.writeFile(other, { path: 'notes.txt', content: 'still writable' }))
  })

  it('a command writing past the disk quota is ended, saying why', async () => {
    const { exitCode, output } = await runToEnd(
      client,
      scope('grower'),
      'while :; do head -c 1048576 /dev/zero >> grow || break; done; echo gave-up',
      { timeoutMs: 20_000 },
    )
    expect(exitCode).not.toBe(0)
    expect(output).toContain('[runner] stopped')
    expect(output).toMatch(/over its disk quota of 32 MiB \(TURNLINE_SANDBOX_TENANT_DISK_MB\)/)
  })
})

describe('each process limit alone', () => {
  const limited = {
    TURNLINE_SANDBOX_MAX_PROCESSES: '200',
    TURNLINE_SANDBOX_TENANT_PROCESSES: '48',
  }

  it("the tenant's own uid (RLIMIT_NPROC across its user namespaces), without cgroups", async () => {
    const { process: alone, client: on } = await runnerWithClient({
      root: join(root, 'uids-only'),
      secret,
      env: { ...limited, TURNLINE_SANDBOX_CGROUPS: 'off' },
    })
    try {
      expect(alone.output()).toMatch(/cgroup[^"]*memory is not limited|memory is not limited/)
      await bombStopsThere(on, 'bomber-uid')
    } finally {
      await alone.stop()
    }
  })

  it("the tenant's cgroup (pids.max), with one uid for every tenant", async () => {
    const { process: alone, client: on } = await runnerWithClient({
      root: join(root, 'cgroups-only'),
      secret,
      env: { ...limited, TURNLINE_SANDBOX_TENANT_UIDS: 'off' },
    })
    try {
      expect(alone.output()).toMatch(/WARNING: every tenant's commands run as uid 65534/)
      await bombStopsThere(on, 'bomber-cgroup')
    } finally {
      await alone.stop()
    }
  })
})

describe('workspaces of the shared uid', () => {
  it("are handed to the tenant's own uid once, never through a symlink", async () => {
    const at = join(root, 'handover')
    const where = scope('legacy')
    const outside = join(root, 'outside.txt')
    await writeFile(outside, 'not the tenant’s')
    await chown(outside, 65534, 65534)
    const before = await runnerWithClient({
      root: at,
      secret,
      env: { TURNLINE_SANDBOX_TENANT_UIDS: 'off' },
    })
    try {
      const made = await runToEnd(
        before.client,
        where,
        `mkdir -p deep/er && echo x > deep/er/file && ln -s ${outside} link && id -u`,
      )
      expect(made.output).toBe('65534\n')
    } finally {
      await before.process.stop()
    }
    const after = await runnerWithClient({ root: at, secret })
    try {
      // Another session of the tenant first: every workspace of it is handed over at once.
      await runToEnd(after.client, scope('legacy'), 'true')
      const uid = await tenantUid(at, 'legacy')
      const seen = await runToEnd(after.client, where, 'echo more >> deep/er/file && id -u')
      expect(seen.output).toBe(`${uid}\n`)
      const ws = join(at, 'legacy', where.sessionId)
      for (const path of [ws, join(ws, 'deep'), join(ws, 'deep/er/file')]) {
        expect((await stat(path)).uid).toBe(uid)
      }
      expect((await lstat(join(ws, 'link'))).uid).toBe(uid)
      expect((await stat(outside)).uid).toBe(65534)
    } finally {
      await after.process.stop()
    }
  })
})
