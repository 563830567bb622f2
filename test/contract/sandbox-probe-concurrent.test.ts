import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { RunnerProcess } from '../support/runner-process.ts'
import { runnerWithClient, runToEnd } from '../support/sandbox-commands.ts'

/**
 * Runners started at once on one root (two server instances sharing a runner root) each probe
 * the sandbox and the network relay in folders of their own: none removes another's probe, so every one starts with
 * the sandbox required. Probe folders left by a runner that died are removed.
 */
const roots: string[] = []
const runners: RunnerProcess[] = []

afterAll(async () => {
  await Promise.all(runners.map((runner) => runner.stop()))
  await Promise.all(roots.map((root) => rm(root, { recursive: true, force: true })))
})

describe('the sandbox probe on a shared runner root', () => {
  it('lets runners started at once all start sandboxed, and clears a dead runner’s probes', async () => {
    const root = await mkdtemp(join(tmpdir(), 'turnline-probe-'))
    roots.push(root)
    // pid_max is at most 4194304 on Linux: no process has this pid
    await mkdir(join(root, '.sandbox-probe-4194305'), { recursive: true })
    await mkdir(join(root, '.egress-probe-4194305'), { recursive: true })
    // Named as this tree names them: the pid, then the folder's number in that process.
    await mkdir(join(root, '.sandbox-probe-4194305-3'), { recursive: true })
    await mkdir(join(root, '.egress-probe-4194305-0'), { recursive: true })
    const secret = 'probe-runner-secret-0123456789abcdef'
    const started = await Promise.all(
      Array.from({ length: 4 }, () => runnerWithClient({ root, secret })),
    )
    runners.push(...started.map((s) => s.process))
    for (const [i, { client }] of started.entries()) {
      const run = await runToEnd(client, { tenant: 'acme', sessionId: `probe-${i}` }, 'echo ok')
      expect(run.exitCode).toBe(0)
      expect(run.output.trim()).toBe('ok')
    }
    const left = (await readdir(root)).filter((name) => /^\.(sandbox|egress)-probe/.test(name))
    expect(left).toEqual([])
  })
})
