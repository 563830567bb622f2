import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnRunnerProcess } from '../../adapters/runner/runner-process.ts'
import { earlyEmbeddedRunnerRequest } from '../../functions/embedded-runner-request.ts'
import { embeddedRunner } from '../../functions/entries/embedded-runner.ts'
import { runnerEnvAhead } from '../../functions/runner-process-env.ts'
import { cmdlineOf, descendantsOf, isGone, parentOf, waitFor } from '../support/proc-tree.ts'

/**
 * `npm start` starts its runner before the server's code has loaded (functions/entries/node.ts),
 * from what the environment asks for; the deps take that runner over only when they ask for
 * the same one, and otherwise it is stopped and another started. Its process is spawned even
 * before that, from the variables as they are (`runnerEnvAhead`), and used only when the parsed
 * request asks for that very environment. Real runner processes.
 */
let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-early-runner-'))
  await chmod(dir, 0o711)
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

const env = (name: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  TURNLINE_DATA_DIR: join(dir, name),
  TURNLINE_SANDBOX: 'off',
  ...extra,
})

/** The runner processes this process started itself (child-main.ts through tsx). */
const runnerProcesses = () =>
  descendantsOf(process.pid).filter(
    (pid) => parentOf(pid) === process.pid && cmdlineOf(pid).includes('child-main'),
  )

const pidOf = (description: string) => Number(/child process (\d+)/.exec(description)?.[1])

describe('the embedded runner started early', () => {
  it('is the one the deps get when they ask for the same runner: one process, started once', async () => {
    const runner = embeddedRunner({ callbacks: false, report: () => {} })
    try {
      const request = earlyEmbeddedRunnerRequest(env('same'), { fsStoreByDefault: true })
      if (request === undefined) throw new Error('no request for a valid environment')
      await runner.startEarly(request)
      const early = runnerProcesses()
      expect(early).toHaveLength(1)
      const given = await runner.defaultRunner(
        earlyEmbeddedRunnerRequest(env('same'), { fsStoreByDefault: true }) ?? request,
      )
      expect(pidOf(given.description)).toBe(early[0])
      expect(runnerProcesses()).toEqual(early)
      expect(await fetch(`${given.url()}/healthz`).then((r) => r.status)).toBe(200)
    } finally {
      await runner.close()
    }
    await waitFor(
      () => runnerProcesses().length === 0,
      () => `runner processes left: ${runnerProcesses().join(', ')}`,
    )
  })

  it('is stopped, and another started, when the deps ask for another runner', async () => {
    const runner = embeddedRunner({ callbacks: false, report: () => {} })
    try {
      const early = earlyEmbeddedRunnerRequest(env('asked'), { fsStoreByDefault: true })
      if (early === undefined) throw new Error('no request for a valid environment')
      await runner.startEarly(early)
      const [first] = runnerProcesses()
      if (first === undefined) throw new Error('no runner process after the early start')
      const other = earlyEmbeddedRunnerRequest(
        env('asked', { TURNLINE_SANDBOX_ENV: 'PIP_INDEX_URL', PIP_INDEX_URL: 'https://x.test' }),
        { fsStoreByDefault: true },
      )
      if (other === undefined) throw new Error('no request for a valid environment')
      const given = await runner.defaultRunner(other)
      const second = pidOf(given.description)
      expect(second).not.toBe(first)
      expect(isGone(first)).toBe(true)
      expect(runnerProcesses()).toEqual([second])
    } finally {
      await runner.close()
    }
  })

  it('takes the process spawned from the variables as they are when the request asks for its environment', async () => {
    const runner = embeddedRunner({ callbacks: false, report: () => {} })
    try {
      const variables = env('ahead', {
        TURNLINE_SANDBOX_ENV: ' PIP_INDEX_URL , ',
        PIP_INDEX_URL: 'https://x.test',
        OPENAI_API_KEY: 'sk-not-for-the-runner',
      })
      const envAhead = runnerEnvAhead(variables)
      if (envAhead === undefined) throw new Error('no environment ahead without a runner URL')
      const ahead = spawnRunnerProcess(envAhead)
      const request = earlyEmbeddedRunnerRequest(variables, { fsStoreByDefault: true })
      if (request === undefined) throw new Error('no request for a valid environment')
      expect(request.env).toEqual(envAhead)
      expect(envAhead).toEqual({ PATH: process.env.PATH ?? '', PIP_INDEX_URL: 'https://x.test' })
      await runner.startEarly(request, ahead)
      const given = await runner.defaultRunner(request)
      expect(pidOf(given.description)).toBe(ahead.child.pid)
      expect(runnerProcesses()).toEqual([ahead.child.pid])
    } finally {
      await runner.close()
    }
  })

  it('abandons the process spawned ahead, having run nothing, when the request asks for another environment', async () => {
    const runner = embeddedRunner({ callbacks: false, report: () => {} })
    try {
      const ahead = spawnRunnerProcess({ PATH: process.env.PATH ?? '', PIP_INDEX_URL: 'x' })
      const request = earlyEmbeddedRunnerRequest(env('abandoned'), { fsStoreByDefault: true })
      if (request === undefined) throw new Error('no request for a valid environment')
      await runner.startEarly(request, ahead)
      // Its stdin ended before any settings: it exits at once, configured by nobody.
      expect(await ahead.exited).toEqual({ code: 0, signal: null })
      const given = await runner.defaultRunner(request)
      expect(pidOf(given.description)).not.toBe(ahead.child.pid)
      expect(runnerProcesses()).toEqual([pidOf(given.description)])
    } finally {
      await runner.close()
    }
  })

  it('spawns nothing ahead for a runner URL; otherwise the environment ahead is the parsed one', () => {
    const remote = { TURNLINE_RUNNER_URL: 'http://127.0.0.1:9', TURNLINE_RUNNER_SECRET: 'x' }
    expect(runnerEnvAhead(env('url', remote))).toBeUndefined()
    const cases = [
      env('plain', { TMPDIR: '/var/tmp', OPENAI_API_KEY: 'sk-x' }),
      env('names', { TURNLINE_SANDBOX_ENV: 'A_1,B', A_1: 'a', B: '', C: 'c' }),
      {
        ...env('keys', { TURNLINE_API_KEYS: `${'k'.repeat(24)}=acme` }),
        TURNLINE_SANDBOX: 'require',
      },
    ]
    for (const variables of cases) {
      const request = earlyEmbeddedRunnerRequest(variables, { fsStoreByDefault: true })
      expect(request).toBeDefined()
      expect(runnerEnvAhead(variables)).toEqual(request?.env)
    }
    // An environment the deps refuse has no request: what was spawned ahead is abandoned.
    const own = env('own', { TURNLINE_SANDBOX_ENV: 'TURNLINE_TOOL_SECRET' })
    expect(runnerEnvAhead(own)).toEqual({ PATH: process.env.PATH ?? '' })
    expect(earlyEmbeddedRunnerRequest(own, { fsStoreByDefault: true })).toBeUndefined()
  })

  it('is not started for a runner URL or an invalid environment (the deps say what is wrong)', () => {
    const options = { fsStoreByDefault: true }
    const remote = { TURNLINE_RUNNER_URL: 'http://127.0.0.1:9', TURNLINE_RUNNER_SECRET: 'x' }
    expect(earlyEmbeddedRunnerRequest(env('url', remote), options)).toBeUndefined()
    expect(earlyEmbeddedRunnerRequest(env('bad', { PORT: 'not-a-port' }), options)).toBeUndefined()
    const { TURNLINE_SANDBOX, ...auto } = env('keys')
    const keys = earlyEmbeddedRunnerRequest(
      { ...auto, TURNLINE_API_KEYS: `${'k'.repeat(24)}=acme` },
      options,
    )
    // Several tenants: the runner must sandbox its commands, whatever TURNLINE_SANDBOX says.
    expect(keys?.sandbox.mode).toBe('require')
    expect(keys?.multiTenant).toBe(true)
  })
})
