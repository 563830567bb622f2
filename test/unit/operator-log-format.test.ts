import { afterEach, describe, expect, it, vi } from 'vitest'
import { createDemoModelClient } from '../../adapters/demo-model/demo-model-client.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { runnerLogLine } from '../../adapters/runner/runner-log.ts'
import { createDeps } from '../../functions/deps.ts'
import { scheduledCallbacks } from '../../functions/entries/scheduled-callbacks.ts'
import { scheduledRetention } from '../../functions/entries/scheduled-retention.ts'
import { workerLog } from '../../functions/entries/worker-background.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { engineDeps } from '../support/engine-deps.ts'

/**
 * Every operator log line is one JSON object with `ts`, `level` and `msg`
 * (docs/configuration.md#operator-log): the scheduled sweeps' lines (Workers, Lambda), the
 * service's own warnings when no sink is given, and the sandbox runner's lines.
 */
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

function operatorLine(line: unknown): Record<string, unknown> {
  expect(typeof line).toBe('string')
  const entry = JSON.parse(line as string) as Record<string, unknown>
  expect(entry.ts).toMatch(ISO)
  expect(['info', 'warn', 'error']).toContain(entry.level)
  expect(typeof entry.msg).toBe('string')
  return entry
}

afterEach(() => {
  vi.restoreAllMocks()
})

describe('operator log format', () => {
  it('stamps the scheduled callback and retention sweeps’ lines with ts and level', async () => {
    const deps = await createDeps({}, { memoryStoreByDefault: true })
    const lines: string[] = []
    await scheduledCallbacks(deps, (line) => lines.push(line))
    await scheduledRetention(deps, { now: Date.parse('2026-12-07T04:00:00Z') }, (line) =>
      lines.push(line),
    )
    expect(lines.map(operatorLine)).toMatchObject([
      { level: 'info', msg: 'callback sweep', markers: 0 },
      { ts: '2026-12-07T04:00:00.000Z', level: 'info', msg: 'retention sweep', workspaces: 0 },
    ])
  })

  it('writes a failed retention pass as an operator log line when the service has no sink', async () => {
    const warned: unknown[] = []
    vi.spyOn(console, 'warn').mockImplementation((line: unknown) => warned.push(line))
    const store = new MemoryObjectStore()
    // The store's listing fails, as a bucket's would while unreachable: the pass after the
    // session's creation cannot run.
    store.list = () => Promise.reject(new Error('listing refused'))
    // The engine's ports without a log sink, as the runtime entries build them.
    const { log: _given, ...deps } = engineDeps(
      { store, model: createDemoModelClient(), fetch },
      [],
    )
    const service = new SessionService(deps, { retentionEvery: 1 })
    await service.createSession('local', {})
    expect(warned.map(operatorLine)).toMatchObject([
      { level: 'warn', msg: 'retention failed', error: 'Error: listing refused' },
    ])
  })
  it("writes the runner's log lines in the same format, named by their event", () => {
    const refused = { event: 'egress_refused', host: '10.0.0.1', reason: 'private' }
    expect(operatorLine(runnerLogLine(refused))).toMatchObject({
      level: 'info',
      msg: 'egress_refused',
      runner: true,
      host: '10.0.0.1',
    })
    expect(operatorLine(runnerLogLine({ event: 'runner_error', level: 'error' }))).toMatchObject({
      level: 'error',
      msg: 'runner_error',
    })
  })
  it("gives the Worker's background lines a level", () => {
    const logged: unknown[] = []
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => logged.push(line))
    workerLog({ msg: 'work sweep', records: 0 })
    expect(logged.map(operatorLine)).toMatchObject([{ level: 'info', msg: 'work sweep' }])
  })
})
