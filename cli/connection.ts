import { TurnlineClient } from '../client/turnline-client.ts'
import { CliError, EXIT } from './exit-codes.ts'
import { chooseProject, embeddedEnv } from './project-folder.ts'

export interface Connection {
  client: TurnlineClient
  /** For the header line: which engine the commands reach. */
  describe: string
  /** Printed at start when the offline demo model answers. */
  demoNotice?: string
  /** Printed at start by commands that run something (the embedded engine's warnings). */
  warnings: string[]
  /** Printed at start by `exec` on the embedded engine: which folder the agent may change. */
  workLine?: string
  close(): Promise<void>
}

export interface ConnectionOptions {
  url?: string | undefined
  apiKey?: string | undefined
  /**
   * `exec` only: the embedded engine's sessions work in this folder (`--cd`, else the current
   * one: project-folder.ts); a server's runner keeps its own folders, so `--cd` is refused there.
   */
  work?: { cd: string | undefined; cwd: string }
}

/**
 * A running server (`--url`, or TURNLINE_URL) with `--api-key` (or TURNLINE_API_KEY), or — the
 * default — the engine embedded in this process, configured from the environment like
 * `npm start`. The embedded engine is loaded only when used, so `--url` starts fast.
 */
export async function connect(
  options: ConnectionOptions,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Connection> {
  const url = options.url ?? nonEmpty(env.TURNLINE_URL)
  const apiKey = options.apiKey ?? nonEmpty(env.TURNLINE_API_KEY)
  if (url !== undefined) {
    let base: URL
    try {
      base = new URL(url)
    } catch {
      throw new CliError(`turnline: --url: not a URL: ${url}`, EXIT.usage)
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new CliError(`turnline: --url: must be http(s): ${url}`, EXIT.usage)
    }
    if (base.username !== '' || base.password !== '') {
      // Not echoed: the password would be printed.
      throw new CliError(
        "turnline: --url must not hold a user or password (user:password@): give the server's API key with --api-key or TURNLINE_API_KEY",
        EXIT.usage,
      )
    }
    if (options.work?.cd !== undefined) {
      throw new CliError(
        "turnline: --cd applies to the embedded engine; a server's runner works in its own folders",
        EXIT.usage,
      )
    }
    const root = base.href.replace(/\/+$/, '')
    return {
      client: new TurnlineClient({ baseUrl: root, ...(apiKey ? { apiKey } : {}) }),
      describe: `server ${root}`,
      warnings: [],
      close: async () => {},
    }
  }
  const engineEnv = embeddedEnv(env)
  const work = options.work
    ? chooseProject(options.work.cd, engineEnv, options.work.cwd)
    : undefined
  const { startEmbeddedEngine } = await import('./embedded-engine.ts')
  const engine = await startEmbeddedEngine(engineEnv, work?.project)
  return {
    client: new TurnlineClient({
      baseUrl: 'http://embedded.turnline',
      fetch: engine.fetch,
      ...(apiKey ? { apiKey } : {}),
    }),
    describe: engine.describe,
    warnings: engine.warnings,
    ...(work ? { workLine: work.line } : {}),
    ...(engine.demoNotice ? { demoNotice: engine.demoNotice } : {}),
    close: () => engine.close(),
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
