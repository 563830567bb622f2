import { TurnlineClient } from '../client/turnline-client.ts'
import { CliError, EXIT } from './exit-codes.ts'

export interface Connection {
  client: TurnlineClient
  /** For the header line: which engine the commands reach. */
  describe: string
  /** Printed at start when the offline demo model answers. */
  demoNotice?: string
  /** Printed at start by commands that run something (the embedded engine's warnings). */
  warnings: string[]
  close(): Promise<void>
}

export interface ConnectionOptions {
  url?: string | undefined
  apiKey?: string | undefined
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
    const root = base.href.replace(/\/+$/, '')
    return {
      client: new TurnlineClient({ baseUrl: root, ...(apiKey ? { apiKey } : {}) }),
      describe: `server ${root}`,
      warnings: [],
      close: async () => {},
    }
  }
  const { startEmbeddedEngine } = await import('./embedded-engine.ts')
  const engine = await startEmbeddedEngine(env)
  return {
    client: new TurnlineClient({
      baseUrl: 'http://embedded.turnline',
      fetch: engine.fetch,
      ...(apiKey ? { apiKey } : {}),
    }),
    describe: engine.describe,
    warnings: engine.warnings,
    ...(engine.demoNotice ? { demoNotice: engine.demoNotice } : {}),
    close: () => engine.close(),
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
