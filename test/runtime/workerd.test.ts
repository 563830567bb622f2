import { join } from 'node:path'
import { freePort, startRuntime } from '../support/runtime-process.ts'
import { smokeScenario } from './smoke-scenario.ts'

const root = new URL('../../', import.meta.url).pathname

/**
 * `wrangler dev --local` (workerd) on wrangler.toml, offline. No S3 or Upstash bindings, so the
 * Worker falls back to the memory adapters; configuration arrives as vars.
 */
smokeScenario('workerd', async (vars) => {
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
      '--log-level',
      'log',
      ...Object.entries(vars).flatMap(([name, value]) => ['--var', `${name}:${value}`]),
    ],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      WRANGLER_SEND_METRICS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      NO_COLOR: '1',
    },
    cwd: root,
    port,
    readyTimeoutMs: 30_000,
  })
})
