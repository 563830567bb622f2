import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { type RunningRunner, startRunner } from '../../adapters/runner/runner-server.ts'
import { SandboxUnavailable } from '../../adapters/runner/sandbox-probe.ts'
import type { DepsOptions } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import { nodeBackends } from './node-backends.ts'

/** What Node adds to the portable deps: the filesystem store and the in-process runner. */
export interface NodeEmbedded {
  options: DepsOptions
  /** Stops the embedded runner (and every command it still runs), if one was started. */
  close(): Promise<void>
}

/**
 * The embedded defaults on Node (`npm start` and the `turnline` CLI): sessions in the filesystem
 * store under TURNLINE_DATA_DIR, a plain-Redis coordinator for REDIS_URL, and the reference
 * sandbox runner in this process with workspaces under `TURNLINE_DATA_DIR/runner` and a random
 * secret. With `callbacks`, the runner reports command exits to this server's
 * `/v1/runner/callback` (a server with a port); without, a waiting turn is continued by its next
 * `POST …/turns` (the CLI does that itself). A runner that must sandbox its commands and cannot
 * is a configuration error that says what to do.
 */
export function nodeEmbedded(options: { callbacks: boolean }): NodeEmbedded {
  let runner: RunningRunner | undefined
  return {
    options: {
      ...nodeBackends,
      defaultRunner: async (dataDir, { host, port }, sandbox) => {
        const secret = randomBytes(24).toString('hex')
        const callbackUrl =
          options.callbacks && port > 0 ? `http://${host}:${port}/v1/runner/callback` : undefined
        runner = await startRunner({
          root: join(dataDir, 'runner'),
          secret,
          sandbox,
          ...(callbackUrl ? { callbackUrl } : {}),
          log: () => {},
        }).catch((error: unknown) => {
          if (!(error instanceof SandboxUnavailable)) throw error
          throw new ConfigError([
            `TURNLINE_SANDBOX: refusing to start the in-process runner: ${error.message}. ` +
              'Commands must run sandboxed here (TURNLINE_SANDBOX=require, which TURNLINE_API_KEYS ' +
              "implies: one tenant's commands must not read this server's secrets or other " +
              "tenants' data). Install bubblewrap (apt-get install bubblewrap) and allow " +
              'unprivileged user namespaces, or set TURNLINE_RUNNER_URL and TURNLINE_RUNNER_SECRET ' +
              'to a runner isolated elsewhere.',
          ])
        })
        return { url: runner.url, secret, sandbox: runner.sandbox, egress: runner.egress }
      },
    },
    close: async () => {
      await runner?.close()
    },
  }
}
