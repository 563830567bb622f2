import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { type RunningRunner, startRunner } from '../../adapters/runner/runner-server.ts'
import type { DepsOptions } from '../deps.ts'

/** What Node adds to the portable deps: the filesystem store and the in-process runner. */
export interface NodeEmbedded {
  options: DepsOptions
  /** Stops the embedded runner (and every command it still runs), if one was started. */
  close(): Promise<void>
}

/**
 * The embedded defaults on Node (`npm start` and the `turnline` CLI): sessions in the filesystem
 * store under TURNLINE_DATA_DIR, and the reference sandbox runner in this process with
 * workspaces under `TURNLINE_DATA_DIR/runner` and a random secret. With `callbacks`, the runner
 * reports command exits to this server's `/v1/runner/callback` (a server with a port); without,
 * a waiting turn is continued by its next `POST …/turns` (the CLI does that itself).
 */
export function nodeEmbedded(options: { callbacks: boolean }): NodeEmbedded {
  let runner: RunningRunner | undefined
  return {
    options: {
      defaultStore: (root) => new FsObjectStore({ root }),
      defaultRunner: async (dataDir, { host, port }) => {
        const secret = randomBytes(24).toString('hex')
        const callbackUrl =
          options.callbacks && port > 0 ? `http://${host}:${port}/v1/runner/callback` : undefined
        runner = await startRunner({
          root: join(dataDir, 'runner'),
          secret,
          ...(callbackUrl ? { callbackUrl } : {}),
          log: () => {},
        })
        return { url: runner.url, secret }
      },
    },
    close: async () => {
      await runner?.close()
    },
  }
}
