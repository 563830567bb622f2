import type { FetchLike } from '../client/transport.ts'
import { createApp } from '../functions/app.ts'
import { createDeps } from '../functions/deps.ts'
import { claimedDeps } from '../functions/entries/entry-app.ts'
import { nodeEmbedded } from '../functions/entries/node-embedded.ts'
import { limitRegExpBacktracking } from '../functions/entries/regexp-backtracking.ts'
import { ConfigError } from '../functions/env-config.ts'
import { SessionService } from '../src/core/session-service.ts'
import { CliError, EXIT } from './exit-codes.ts'

export interface EmbeddedEngine {
  fetch: FetchLike
  /** One line for stderr: where sessions live and which model answers. */
  describe: string
  /** Set when the offline demo model answers (said at start, even with --json). */
  demoNotice?: string
  /** Startup warnings of the engine, e.g. commands running without the command sandbox. */
  warnings: string[]
  close(): Promise<void>
}

/**
 * The engine in this process, exactly as `npm start` configures it from the environment
 * (TURNLINE_DATA_DIR, OPENAI_*, TURNLINE_MODEL, S3_*, …; the CLI defaults TURNLINE_DATA_DIR to a
 * per-user folder, project-folder.ts), so `turnline sessions`, `events` and `exec resume` see
 * sessions across runs, and the reference runner as a child process: every session working in
 * `project` (project mode), else in `<runner root>/<tenant>/<session>`. Requests go to the app's
 * own fetch: no port. The runner sends no exit callbacks; the CLI continues a waiting turn itself.
 */
export async function startEmbeddedEngine(
  env: Readonly<Record<string, string | undefined>>,
  project?: string,
): Promise<EmbeddedEngine> {
  const embedded = nodeEmbedded({
    callbacks: false,
    // As the engine's own operator log: its warnings and faults only, on stderr.
    runnerLogLevel: 'warn',
    ...(project ? { project } : {}),
    report: (line) => process.stderr.write(`turnline: WARNING: ${line}\n`),
  })
  // Nothing listens: the address settings of the server entry do not apply here.
  limitRegExpBacktracking()
  const deps = await createDeps({ ...env, HOST: '127.0.0.1', PORT: '0' }, embedded.options)
    .then(claimedDeps)
    .catch((error: unknown) => {
      if (error instanceof ConfigError) throw new CliError(`turnline: ${error.message}`, EXIT.usage)
      throw error
    })
  const app = createApp({
    api: new SessionService(deps.service),
    auth: deps.auth,
    ...deps.http,
    requestLog: undefined,
    // Nothing listens: requests come only from this process, addressed to no real host.
    allowedHosts: 'any',
    // Faults of the engine itself, as JSON lines on stderr (stdout belongs to --json).
    log: (entry) =>
      process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), ...entry })}\n`),
  })
  const model = deps.model
  const modelText =
    model.provider === 'demo'
      ? `${model.defaultModel} (the offline demo model)`
      : model.provider === 'none'
        ? 'none configured'
        : `${model.defaultModel ?? 'named by each session'} via ${model.baseURL}`
  const store = deps.config.S3_BUCKET
    ? `S3 bucket ${deps.config.S3_BUCKET}`
    : deps.config.TURNLINE_STORE === 'memory'
      ? 'memory (lost at exit)'
      : deps.config.TURNLINE_DATA_DIR
  return {
    fetch: (request) => Promise.resolve(app.fetch(request)),
    describe: `embedded engine, sessions in ${store}, model ${modelText}`,
    // Said before anything runs: the runner's network too, once its egress probe has ended.
    warnings: [...deps.warnings, ...((await deps.laterNotes)?.warnings ?? [])],
    ...(model.provider === 'demo'
      ? {
          demoNotice:
            `turnline: model ${model.defaultModel} is the built-in OFFLINE DEMO MODEL, not a ` +
            'language model (it answers and runs tools when asked, to show the loop); set ' +
            'OPENAI_API_KEY (or OPENAI_BASE_URL) and TURNLINE_MODEL for a real one',
        }
      : {}),
    close: () => embedded.close(),
  }
}
