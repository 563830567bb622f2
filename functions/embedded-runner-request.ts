import { type SandboxSettings, sandboxSettingsFrom } from '../adapters/runner/sandbox-settings.ts'
import { type EnvConfig, parseEnv } from './env-config.ts'
import { LOCAL_TENANT } from './http/auth.ts'
import { runnerProcessEnv } from './runner-process-env.ts'
import { storeKindOf } from './store-choice.ts'
import { isMultiTenantEnv } from './tenancy/tenancy-env.ts'

/** What an entry needs to start the embedded runner (Node: a child process, node-embedded.ts). */
export interface EmbeddedRunnerRequest {
  /** TURNLINE_RUNNER_ROOT; undefined: the entry's default, beside TURNLINE_DATA_DIR. */
  root: string | undefined
  dataDir: string
  /** The filesystem store's folder when sessions are kept there (TURNLINE_DATA_DIR), else undefined. */
  storeDir: string | undefined
  server: { host: string; port: number }
  /** With `mode` `require` (always with several tenants), no working sandbox is a ConfigError. */
  sandbox: SandboxSettings
  multiTenant: boolean
  /** Tenants the runner sets up once it has answered: single-tenant, `local`; else none. */
  prepareTenants: string[]
  /** The runner process's whole environment (runner-process-env.ts). */
  env: Record<string, string>
}

/** The embedded runner asked for by `config` (runner-choice.ts starts it when no URL is set). */
export function embeddedRunnerRequest(
  config: EnvConfig,
  env: Readonly<Record<string, string | undefined>>,
  storeDir: string | undefined,
): EmbeddedRunnerRequest {
  const settings = sandboxSettingsFrom(config)
  // Several tenants: their commands run sandboxed or not at all.
  const multiTenant = isMultiTenantEnv(config)
  return {
    root: config.TURNLINE_RUNNER_ROOT,
    dataDir: config.TURNLINE_DATA_DIR,
    storeDir,
    server: { host: config.HOST, port: config.PORT },
    sandbox: multiTenant ? { ...settings, mode: 'require' } : settings,
    multiTenant,
    prepareTenants: multiTenant ? [] : [LOCAL_TENANT],
    env: runnerProcessEnv(env, settings.passEnv),
  }
}

/**
 * The request createDeps will make of an entry's embedded runner, worked out from the
 * environment alone, so that a Node start can launch the runner before the rest of the server's
 * code has loaded (functions/entries/node.ts); createDeps still parses and checks everything and
 * asks again, and the entry uses the early runner only when the two requests are the same.
 * Undefined when a runner URL is configured or the environment is invalid (createDeps then says
 * why, before anything answers).
 */
export function earlyEmbeddedRunnerRequest(
  env: Readonly<Record<string, string | undefined>>,
  runtime: { fsStoreByDefault: boolean },
): EmbeddedRunnerRequest | undefined {
  let config: EnvConfig
  try {
    config = parseEnv(env)
  } catch {
    return undefined
  }
  if (config.TURNLINE_RUNNER_URL !== undefined) return undefined
  const kind = storeKindOf(config, { defaultStore: runtime.fsStoreByDefault })
  return embeddedRunnerRequest(config, env, kind === 'fs' ? config.TURNLINE_DATA_DIR : undefined)
}
