import { compile } from 'zod'
import { useSchemaCompiler } from '../../src/contract/compiled-schema.ts'
import { preloadEncodings, useRankTables } from '../../src/core/session-service.ts'
import { startCallbackLoop } from './callback-loop.ts'
import type { EmbeddedRunnerStarter } from './embedded-runner.ts'
import { onStartupError, startEntryApp } from './entry-app.ts'
import { nodeBackends } from './node-backends.ts'
import { serveOnNode } from './node-server.ts'
import { rankTableFiles } from './rank-table-files.ts'
import { warmedFsStore } from './warmed-fs-store.ts'

/**
 * The Node server on the embedded defaults (node.ts loads this once it has started the runner):
 * sessions in the filesystem store, the reference runner as a child process calling back this
 * server, served at HOST:PORT with a graceful shutdown on SIGINT/SIGTERM.
 */
useRankTables(rankTableFiles)

export async function serveNodeEntry(runner: EmbeddedRunnerStarter): Promise<void> {
  // What a commit writes is checked through zod's compiled parsers (compiled-schema.ts).
  useSchemaCompiler(compile)
  // The tokenizer's o200k table (the encoding of current models) loads on this thread while the
  // deps are built (startEntryApp waits for the runner); preload() below then finds it loaded,
  // or loads the default model's encoding when that is another.
  const encodings = preloadEncodings().catch(() => undefined)
  const entry = await startEntryApp(
    process.env,
    { ...nodeBackends, defaultStore: warmedFsStore, defaultRunner: runner.defaultRunner },
    { log: (line) => console.log(line), startLineAtListen: true, background: true, sockets: true },
  ).catch(onStartupError((code) => process.exit(code)))
  // Before listening: a large input's first count would otherwise load it while requests wait.
  await encodings
  await entry.api.preload()
  const callbacks = startCallbackLoop(entry.deps)
  serveOnNode(entry, async () => {
    entry.worker?.stop()
    callbacks?.stop()
    await Promise.all([runner.close(), entry.deps.flushTelemetry?.()])
  })
  // Background turns recorded before this process started (or by an instance that died) first.
  entry.worker?.start()
}
