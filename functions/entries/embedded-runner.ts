import { randomBytes } from 'node:crypto'
import { isDeepStrictEqual } from 'node:util'
import { type RunnerProcess, spawnRunnerProcess } from '../../adapters/runner/runner-process.ts'
import { type SupervisedRunner, superviseRunner } from '../../adapters/runner/runner-supervisor.ts'
import { SandboxUnavailable } from '../../adapters/runner/sandbox-probe.ts'
import type { EmbeddedRunnerRequest } from '../embedded-runner-request.ts'
import { ConfigError } from '../env-config.ts'
import type { DefaultRunner, EmbeddedRunner } from '../runner-choice.ts'
import { prepareRunnerLayout } from './runner-layout.ts'

export interface EmbeddedRunnerOptions {
  /**
   * The runner reports command exits to this server's `/v1/runner/callback` (a server with a
   * port); without, a waiting turn is continued by its next `POST …/turns` (the CLI does that).
   */
  callbacks: boolean
  /** Where the runner's deaths and restarts are reported (loudly). */
  report: (line: string) => void
  /** The runner died too often to be restarted again (`npm start` then exits). */
  onRunnerGivenUp?: (why: string) => void
  /**
   * Project mode (the `turnline` command on a user's folder): every session works in this
   * folder, the one writable path of its commands, instead of a folder of its own under the
   * runner's root (adapters/runner/project-mode.ts).
   */
  project?: string
  /** The least level of the runner's log lines on stderr: `info` (`npm start`) or `warn` (the CLI). */
  runnerLogLevel?: 'info' | 'warn'
}

/** The reference runner as a child process, started for the deps (`defaultRunner`) or before. */
export interface EmbeddedRunnerStarter {
  defaultRunner: DefaultRunner
  /**
   * Starts the runner for `request` now, before the deps ask for it (functions/entries/node.ts
   * does so before the server's code has loaded): `defaultRunner` hands over this start when
   * it is asked for the same request, with its outcome (a refusal included), and otherwise
   * stops it and starts another. Resolves once the child process has its settings (its
   * folders prepared first), so that what the caller does next cannot hold them up. `spawned`:
   * the runner's process spawned even earlier (node.ts), used when it has the environment the
   * request asks for, else abandoned unconfigured.
   */
  startEarly(request: EmbeddedRunnerRequest, spawned?: RunnerProcess): Promise<void>
  /** Stops the runner (and every command it still runs), if one was started. */
  close(): Promise<void>
}

/**
 * The reference sandbox runner as a child process (adapters/runner/child-main.ts) with an
 * environment of its own — PATH and TURNLINE_SANDBOX_ENV's variables, none of this server's
 * secrets — a random secret handed over on its stdin, and its workspaces in a tree apart from
 * the sessions (runner-layout.ts). It is restarted when it dies (runner-supervisor.ts). A
 * runner that must sandbox its commands and cannot is a configuration error that says what to do.
 */
export function embeddedRunner(options: EmbeddedRunnerOptions): EmbeddedRunnerStarter {
  const started: SupervisedRunner[] = []
  let early: { request: EmbeddedRunnerRequest; runner: Promise<EmbeddedRunner> } | undefined

  const start = async (
    request: EmbeddedRunnerRequest,
    handedOver: () => void = () => {},
    ahead?: RunnerProcess,
  ): Promise<EmbeddedRunner> => {
    // The process loads its code while its folders are prepared (its settings name them).
    const spawned = processFor(request, ahead)
    const layout = await prepareRunnerLayout(request).catch((error: unknown) => {
      spawned.abandon()
      throw error
    })
    const secret = randomBytes(24).toString('hex')
    const { host, port } = request.server
    const callbackUrl =
      options.callbacks && port > 0 ? `http://${host}:${port}/v1/runner/callback` : undefined
    const supervised = superviseRunner(
      {
        root: layout.root,
        secret,
        sandbox: request.sandbox,
        env: request.env,
        prepareTenants: request.prepareTenants,
        ...(options.project ? { project: options.project } : {}),
        ...(options.runnerLogLevel ? { logLevel: options.runnerLogLevel } : {}),
        ...(callbackUrl ? { callbackUrl } : {}),
        report: options.report,
        ...(options.onRunnerGivenUp ? { onGiveUp: options.onRunnerGivenUp } : {}),
      },
      spawned,
    )
    // The child has its settings now (written as the supervisor starts it).
    handedOver()
    const runner = await supervised.catch((error: unknown) => {
      if (!(error instanceof SandboxUnavailable)) throw error
      throw new ConfigError([
        `TURNLINE_SANDBOX: refusing to start the embedded runner: ${error.message}. ` +
          'Commands must run sandboxed here (TURNLINE_SANDBOX=require, which TURNLINE_API_KEYS ' +
          "implies: one tenant's commands must not read this server's secrets or other " +
          "tenants' data). Install bubblewrap (apt-get install bubblewrap) and allow " +
          'unprivileged user namespaces, or set TURNLINE_RUNNER_URL and TURNLINE_RUNNER_SECRET ' +
          'to a runner isolated elsewhere.',
      ])
    })
    started.push(runner)
    return {
      url: () => runner.url(),
      secret,
      sandbox: runner.sandbox,
      egress: runner.egress,
      description:
        `in child process ${runner.pid()} (${runner.url()}, an environment without this ` +
        `server's secrets), ${options.project ? `every session working in ${options.project}` : `workspaces under ${layout.root}`}`,
      notices: layout.notices,
      warnings: layout.warnings,
    }
  }

  return {
    defaultRunner: async (request) => {
      const ahead = early
      early = undefined
      if (ahead !== undefined) {
        if (isDeepStrictEqual(ahead.request, request)) return ahead.runner
        // Not what the deps ask for (the environment changed in between): not used.
        await ahead.runner.then(
          () => stopAll(),
          () => undefined,
        )
      }
      return start(request)
    },
    startEarly: (request, spawned) =>
      new Promise((resolve) => {
        const runner = start(request, resolve, spawned)
        // Its outcome, a refusal included, is the deps' when they ask (defaultRunner).
        runner.catch(() => undefined).finally(resolve)
        early = { request, runner }
      }),
    close: () => stopAll(),
  }

  /** The process spawned ahead when its environment is the one asked for, else a new one. */
  function processFor(request: EmbeddedRunnerRequest, ahead?: RunnerProcess): RunnerProcess {
    if (ahead !== undefined && isDeepStrictEqual(ahead.env, request.env)) return ahead
    ahead?.abandon()
    return spawnRunnerProcess(request.env)
  }

  async function stopAll(): Promise<void> {
    const runners = started.splice(0)
    await Promise.all(runners.map((runner) => runner.close()))
  }
}
