import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRunnerChild } from '../../adapters/runner/runner-child.ts'
import { DEFAULT_SANDBOX_SETTINGS } from '../../adapters/runner/sandbox-settings.ts'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import { runnerProcessEnv } from '../../functions/runner-process-env.ts'
import { value } from '../support/runner-results.ts'
import { until } from '../support/until.ts'

/**
 * A single-tenant server's runner sets the tenant `local` up once it has answered ready
 * (`prepare_tenants` on its stdin, runner-child-protocol.ts), so that the first turn does not
 * pay for the tenant's uid and cgroups; without it the first request does that. Real runner
 * processes, real bubblewrap, a root runner (tenant uids).
 */
const SECRET = 'runner-tenant-ahead-secret-0123456789'
const settings = { ...DEFAULT_SANDBOX_SETTINGS, mode: 'require' as const }
let dir: string

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: tenant uids need a root runner')
  dir = await mkdtemp(join(tmpdir(), 'turnline-tenant-ahead-'))
  await chmod(dir, 0o711)
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

const recordOf = (root: string) =>
  readFile(join(root, '.runner-state', 'tenant-uids', 'local.json'), 'utf8').then(
    (text) => JSON.parse(text) as { uid: number },
    () => undefined,
  )

const start = (root: string, prepareTenants?: string[]) =>
  startRunnerChild({
    root,
    secret: SECRET,
    sandbox: settings,
    env: runnerProcessEnv(process.env, []),
    ...(prepareTenants ? { prepareTenants } : {}),
  })

describe('the tenant of a single-tenant server', () => {
  it('is set up by its runner before any request, and its first command runs as that setup says', async () => {
    const root = join(dir, 'ahead')
    const runner = await start(root, ['local'])
    try {
      const record = await until('the tenant set up ahead', () => recordOf(root))
      const client = new HttpSandboxRunner({ url: runner.url, secret: SECRET })
      const done = value(
        await client.start(
          { tenant: 'local', sessionId: 'first' },
          {
            requestId: 'req_first',
            toolCallId: 'call_first',
            cmd: 'id -u',
            tty: false,
            yieldTimeMs: 10_000,
            maxOutputBytes: 4096,
          },
        ),
      )
      expect(`${done.output.head}${done.output.tail}`.trim()).toBe(String(record.uid))
    } finally {
      await runner.close()
    }
  })

  it('is not set up by a runner not asked to, before its first request', async () => {
    const root = join(dir, 'not-asked')
    const runner = await start(root)
    try {
      await runner.egress
      // Another round trip to the runner: what it began at its start has had its turn.
      expect(await fetch(`${runner.url}/healthz`).then((r) => r.status)).toBe(200)
      expect(await recordOf(root)).toBeUndefined()
    } finally {
      await runner.close()
    }
  })
})
