import type { EgressStatus } from '../adapters/runner/command-networks.ts'
import type { SandboxStatus } from '../adapters/runner/command-sandbox.ts'
import { HttpSandboxRunner } from '../adapters/sandbox-http/http-sandbox-runner.ts'
import { runnerSandbox } from '../adapters/sandbox-http/runner-sandbox-status.ts'
import {
  SandboxedOnlyRunner,
  unsandboxedRunnerText,
} from '../adapters/sandbox-http/sandboxed-only-runner.ts'
import type { SandboxRunner } from '../src/ports/sandbox-runner.ts'
import { type EmbeddedRunnerRequest, embeddedRunnerRequest } from './embedded-runner-request.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'
import { egressNotes, type StartNotes, sandboxNotes } from './sandbox-notices.ts'
import { isMultiTenantEnv } from './tenancy/tenancy-env.ts'

export interface EmbeddedRunner {
  /** The runner's URL now (a restarted runner listens elsewhere). */
  url: () => string
  secret: string
  sandbox: SandboxStatus
  /**
   * How its commands allowed the network reach it: the egress proxy, or none and why; known
   * once its egress probe has ended, after the runner answered (its commands allowed the
   * network wait for it, in the runner).
   */
  egress: Promise<EgressStatus>
  /** Where and how it runs, for the start notice (its process id, its workspace folder). */
  description: string
  notices: string[]
  warnings: string[]
}

export type DefaultRunner = (request: EmbeddedRunnerRequest) => Promise<EmbeddedRunner>

/**
 * The sandbox runner: configured by URL and secret, else the entry's embedded one, else none.
 * Its notices and warnings (how commands are isolated) go to the start output; the embedded
 * runner's about its commands' network come later (`laterNotes`), once its egress probe ended.
 */
export async function sandboxRunnerOf(
  config: EnvConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: { defaultRunner?: DefaultRunner | undefined; storeDir: string | undefined },
  fetchImpl: typeof fetch,
  notices: string[],
  warnings: string[],
): Promise<
  { client: SandboxRunner; secret: string; laterNotes?: Promise<StartNotes> } | undefined
> {
  if (config.TURNLINE_RUNNER_URL === undefined && options.defaultRunner) {
    const embedded = await options.defaultRunner(
      embeddedRunnerRequest(config, env, options.storeDir),
    )
    notices.push(`sandbox: the reference runner ${embedded.description}`, ...embedded.notices)
    warnings.push(...embedded.warnings)
    sandboxNotes(embedded.sandbox, notices, warnings)
    return {
      laterNotes: embedded.egress.then((egress) => egressNotes(embedded.sandbox, egress)),
      client: new HttpSandboxRunner({
        url: embedded.url,
        secret: embedded.secret,
        fetch: fetchImpl,
      }),
      secret: embedded.secret,
    }
  }
  const url = config.TURNLINE_RUNNER_URL
  const secret = config.TURNLINE_RUNNER_SECRET
  if (url === undefined || secret === undefined) {
    notices.push(
      'no sandbox runner (TURNLINE_RUNNER_URL and TURNLINE_RUNNER_SECRET): sessions have their HTTP tools only',
    )
    return undefined
  }
  const client = new HttpSandboxRunner({ url, secret, fetch: fetchImpl })
  const probe = () => runnerSandbox({ url, secret, fetch: fetchImpl, now: Date.now })
  const found = await probe()
  if (!isMultiTenantEnv(config)) {
    if (found.known && found.sandbox.isolation === 'none') {
      warnings.push(
        `commands run UNSANDBOXED on the sandbox runner at ${url} (${found.sandbox.reason}): ` +
          "with the runner host's files and network. Fine for one trusted user; never serve " +
          'others like this (with several tenants the server refuses such a runner).',
      )
    }
    return { client, secret }
  }
  // Several tenants: commands only on a runner that reports bubblewrap, now and before each one.
  const refusal = unsandboxedRunnerText(url, found)
  if (found.known && refusal !== undefined) throw new ConfigError([refusal])
  if (!found.known || found.sandbox.isolation !== 'bwrap') {
    warnings.push(
      `could not learn how the sandbox runner at ${url} isolates commands (${found.known ? found.sandbox.isolation : found.why}); ` +
        'every command first asks it, and none runs until it reports bubblewrap',
    )
  } else {
    notices.push(`sandbox: the runner at ${url} reports bubblewrap ${found.sandbox.version}`)
  }
  return { client: new SandboxedOnlyRunner(client, probe), secret }
}
