import { join } from 'node:path'
import { freePort, startRuntime } from '../support/runtime-process.ts'
import { smokeScenario } from './smoke-scenario.ts'

const root = new URL('../../', import.meta.url).pathname

/** `deno serve functions/deno.ts` from node_modules' deno, offline, on the memory adapters. */
smokeScenario('Deno', async (vars) => {
  const port = await freePort()
  return startRuntime({
    name: 'deno serve',
    command: join(root, 'node_modules/.bin/deno'),
    args: [
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--allow-net',
      '--allow-env',
      '--allow-read',
      'functions/deno.ts',
    ],
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DENO_NO_UPDATE_CHECK: '1',
      NO_COLOR: '1',
      TURNLINE_STORE: 'memory',
      ...vars,
    },
    cwd: root,
    port,
    readyTimeoutMs: 20_000,
  })
})
