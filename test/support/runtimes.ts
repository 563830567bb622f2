import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, type RuntimeProcess, startRuntime } from './runtime-process.ts'

const root = new URL('../../', import.meta.url).pathname
const baseEnv = () => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  NO_COLOR: '1',
})

/**
 * `wrangler dev --local` (workerd) on wrangler.toml, offline: configuration arrives as vars only
 * (neither the test process's environment nor a .dev.vars or .env file leaks in).
 */
export async function startWorkerd(
  vars: Record<string, string>,
  extraArgs: string[] = [],
  readyStatus = 200,
): Promise<RuntimeProcess> {
  const [port, inspectorPort] = [await freePort(), await freePort()]
  return startRuntime({
    name: 'wrangler dev',
    command: join(root, 'node_modules/.bin/wrangler'),
    args: [
      'dev',
      '--local',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--inspector-port',
      String(inspectorPort),
      '--show-interactive-dev-session=false',
      // Neither .dev.vars nor .env of a developer's checkout reaches the Worker.
      '--env-file',
      '/dev/null',
      '--log-level',
      'log',
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
      ...extraArgs,
    ],
    env: {
      ...baseEnv(),
      WRANGLER_SEND_METRICS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: 'false',
    },
    cwd: root,
    port,
    // wrangler bundles the Worker before workerd starts: 20 s seen under load on 2 cores.
    readyTimeoutMs: 60_000,
    readyStatus,
  })
}

/**
 * The permissions of a deno.json task (`serve`: the filesystem store; `serve:s3`: S3 and
 * Upstash), the ones docs/deploy/deno-deploy.md gives: the tests run Deno with exactly those.
 */
export function denoTaskFlags(task: 'serve' | 'serve:s3'): string[] {
  const config = JSON.parse(readFileSync(join(root, 'deno.json'), 'utf8')) as {
    tasks?: Record<string, { command?: string }>
  }
  const command = config.tasks?.[task]?.command
  if (command === undefined) throw new Error(`deno.json has no task ${task}`)
  return command.split(/\s+/).filter((word) => word.startsWith('--allow-'))
}

/** The permissions of a deployment on S3 and Upstash (deno.json's `serve:s3`). */
export const DENO_FLAGS = denoTaskFlags('serve:s3')

/**
 * `deno serve functions/entries/deno.ts` with node_modules' deno; the environment is exactly
 * `vars`, the permissions `flags` (add `--allow-write` for the filesystem store). `module` and
 * `cwd` start another module (the Deno build, dist/deno/server.mjs) from another folder.
 */
export async function startDeno(
  vars: Record<string, string>,
  flags: readonly string[] = DENO_FLAGS,
  { module = 'functions/entries/deno.ts', cwd = root }: { module?: string; cwd?: string } = {},
): Promise<RuntimeProcess> {
  const port = await freePort()
  return startRuntime({
    name: 'deno serve',
    command: join(root, 'node_modules/.bin/deno'),
    args: ['serve', '--host', '127.0.0.1', '--port', String(port), ...flags, module],
    env: { ...baseEnv(), DENO_NO_UPDATE_CHECK: '1', ...vars },
    cwd,
    port,
    readyTimeoutMs: 20_000,
  })
}
