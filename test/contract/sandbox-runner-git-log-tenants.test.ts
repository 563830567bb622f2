import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { looseBytes } from '../support/git-read-worst.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'
import { value } from '../support/runner-results.ts'

/**
 * The runner reads one `.git` at a time, for every tenant: a tenant that asks for many readings
 * of its costliest repositories at once makes its own readings wait, not another tenant's. The
 * other tenant's reading is the next to run once the one under way ends, not the last.
 */
const fixture = useRunnerProcess('git-log-tenants-runner')
const NOISY_READINGS = 10

describe('readings of the recent git log of two tenants', () => {
  it("run another tenant's reading next, not after all of one tenant's", async () => {
    const noisy: SandboxScope[] = Array.from({ length: NOISY_READINGS }, (_, i) => ({
      tenant: 'noisy',
      sessionId: `git-log-noisy-${i}`,
    }))
    const quiet: SandboxScope = { tenant: 'quiet', sessionId: 'git-log-quiet' }
    for (const scope of [...noisy, quiet]) {
      value(await fixture.client.writeFile(scope, { path: 'README', content: 'x\n' }))
    }
    // Each noisy reading reads loose commits up to its bound on bytes (hundreds of ms).
    for (const scope of noisy) {
      await looseBytes(join(fixture.root, scope.tenant, scope.sessionId, '.git'), 1024 * 1024)
    }
    // The quiet tenant's workspace is known to the runner before the noisy readings start.
    expect(value(await fixture.client.recentCommits(quiet, { count: 5 }))).toEqual({
      state: 'none',
    })
    const answered: string[] = []
    const readings = noisy.map((scope) =>
      fixture.client.recentCommits(scope, { count: 5 }).finally(() => {
        answered.push(scope.sessionId)
      }),
    )
    // Asked once the first noisy reading has ended: the other noisy ones wait, or one runs.
    await Promise.race(readings)
    const own = value(await fixture.client.recentCommits(quiet, { count: 5 }))
    answered.push('quiet')
    expect(own).toEqual({ state: 'none' })
    for (const reading of readings) expect(value(await reading)).toMatchObject({ state: 'unknown' })
    // One after another it would come last; in turn, after the reading under way when it was
    // asked (and a few more only while the request is on its way to the runner's queue).
    expect(answered.indexOf('quiet'), answered.join(' ')).toBeLessThanOrEqual(NOISY_READINGS - 4)
  })
})
