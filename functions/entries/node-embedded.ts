import type { DepsOptions } from '../deps.ts'
import { type EmbeddedRunnerOptions, embeddedRunner } from './embedded-runner.ts'
import { nodeBackends } from './node-backends.ts'

/** What Node adds to the portable deps: the filesystem store and the embedded runner. */
export interface NodeEmbedded {
  options: DepsOptions
  /** Stops the embedded runner (and every command it still runs), if one was started. */
  close(): Promise<void>
}

export type NodeEmbeddedOptions = EmbeddedRunnerOptions

/**
 * The embedded defaults on Node (the `turnline` CLI; `npm start` puts the same parts together
 * in node.ts, so that its runner can start first): sessions in the filesystem store under
 * TURNLINE_DATA_DIR, a plain-Redis coordinator for REDIS_URL, and the reference sandbox runner
 * as a child process (embedded-runner.ts).
 */
export function nodeEmbedded(options: NodeEmbeddedOptions): NodeEmbedded {
  const runner = embeddedRunner(options)
  return {
    options: { ...nodeBackends, defaultRunner: runner.defaultRunner },
    close: () => runner.close(),
  }
}
