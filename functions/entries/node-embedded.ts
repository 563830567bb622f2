import { randomBytes } from 'node:crypto'
import { type SupervisedRunner, superviseRunner } from '../../adapters/runner/runner-supervisor.ts'
import { SandboxUnavailable } from '../../adapters/runner/sandbox-probe.ts'
import type { DepsOptions } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import { nodeBackends } from './node-backends.ts'
import { prepareRunnerLayout } from './runner-layout.ts'

/** What Node adds to the portable deps: the filesystem store and the embedded runner. */
export interface NodeEmbedded {
  options: DepsOptions
  /** Stops the embedded runner (and every command it still runs), if one was started. */
  close(): Promise<void>
}

export interface NodeEmbeddedOptions {
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
}

/**
 * The embedded defaults on Node (`npm start` and the `turnline` CLI): sessions in the filesystem
 * store under TURNLINE_DATA_DIR, a plain-Redis coordinator for REDIS_URL, and the reference
 * sandbox runner as a child process (adapters/runner/child-main.ts) with an environment of its
 * own — PATH and TURNLINE_SANDBOX_ENV's variables, none of this server's secrets — a random
 * secret handed over on its stdin, and its workspaces in a tree apart from the sessions
 * (runner-layout.ts). It is restarted when it dies (runner-supervisor.ts). A runner that must
 * sandbox its commands and cannot is a configuration error that says what to do.
 */
export function nodeEmbedded(options: NodeEmbeddedOptions): NodeEmbedded {
  let runner: SupervisedRunner | undefined
  return {
    options: {
      ...nodeBackends,
      defaultRunner: async (request) => {
        const layout = await prepareRunnerLayout(request)
        const secret = randomBytes(24).toString('hex')
        const { host, port } = request.server
        const callbackUrl =
          options.callbacks && port > 0 ? `http://${host}:${port}/v1/runner/callback` : undefined
        runner = await superviseRunner({
          root: layout.root,
          secret,
          sandbox: request.sandbox,
          env: request.env,
          ...(options.project ? { project: options.project } : {}),
          ...(callbackUrl ? { callbackUrl } : {}),
          report: options.report,
          ...(options.onRunnerGivenUp ? { onGiveUp: options.onRunnerGivenUp } : {}),
        }).catch((error: unknown) => {
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
        const started = runner
        return {
          url: () => started.url(),
          secret,
          sandbox: started.sandbox,
          egress: started.egress,
          description:
            `in child process ${started.pid()} (${started.url()}, an environment without this ` +
            `server's secrets), ${options.project ? `every session working in ${options.project}` : `workspaces under ${layout.root}`}`,
          notices: layout.notices,
          warnings: layout.warnings,
        }
      },
    },
    close: async () => {
      await runner?.close()
    },
  }
}
