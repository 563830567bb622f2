import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { looseBytes } from '../support/git-read-worst.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'
import { value } from '../support/runner-results.ts'

/**
 * The runner reads a `.git` on its one JavaScript thread, which serves every tenant: a reading
 * of the most expensive repository a tenant can make within the reading's bounds lets other
 * requests in as it goes, instead of holding them all until it ends.
 */
const fixture = useRunnerProcess('git-log-stall-runner')

describe('the recent git log read without a process, on the thread every tenant shares', () => {
  it('answers other requests while it reads the costliest repository within its bounds', async () => {
    const scope: SandboxScope = { tenant: 'heavy', sessionId: 'git-log-stall' }
    value(await fixture.client.writeFile(scope, { path: 'README', content: 'x\n' }))
    // 130 MiB of loose commits of 1 MiB each (the most one may have), each a message of blank
    // lines: read in one go, this held the runner some 1.5–4 s by load.
    await looseBytes(join(fixture.root, scope.tenant, scope.sessionId, '.git'), 1024 * 1024)

    let answeredAt: number | undefined
    const started = performance.now()
    const reading = fixture.client.recentCommits(scope, { count: 5 }).finally(() => {
      answeredAt = performance.now()
    })
    // Health asked one after another while the reading runs. Held by it, every one asked after
    // it began answers only after its answer: the last answered before it, when the reading
    // began. Let in as it goes, one answers shortly before the reading's answer.
    let answeredDuring = 0
    let lastDuring = started
    while (answeredAt === undefined) {
      const res = await fetch(`${fixture.runner.url}/healthz`)
      expect(res.status).toBe(200)
      await res.arrayBuffer()
      if (answeredAt !== undefined) break
      answeredDuring++
      lastDuring = performance.now()
    }
    expect(value(await reading)).toMatchObject({ state: 'unknown' })
    const took = (answeredAt ?? 0) - started
    expect(answeredDuring).toBeGreaterThanOrEqual(3)
    // Within the reading's last half, whatever the machine's speed and load.
    expect((answeredAt ?? 0) - lastDuring).toBeLessThan(took / 2)
  })
})
