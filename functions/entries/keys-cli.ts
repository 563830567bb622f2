import { isAbsolute, relative } from 'node:path'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { createDeps } from '../deps.ts'
import { ConfigError } from '../env-config.ts'
import { runKeysCommand } from '../tenancy/keys-command.ts'
import { nodeBackends } from './node-backends.ts'

/**
 * `npm run keys -- <command>` (built: `node dist/node/keys.mjs <command>`): adds, revokes and
 * lists the API keys of the key registry (`.turnline/api-keys.json` in the store the
 * environment configures, the one the server reads) and sets per-tenant limits. Only SHA-256
 * hashes of keys are written. See docs/configuration.md#tenancy.
 */
const argv = process.argv.slice(2)
const invoked = invocation(process.argv[1] ?? 'keys.mjs')
let store: ObjectStore = new MemoryObjectStore()
if (argv[0] !== 'hash') {
  // The server's own backends, so every configuration it starts with (REDIS_URL, S3 through the
  // AWS credential chain) configures this command too. Only the store matters here; the address
  // checks of a server do not apply.
  const deps = await createDeps(
    { ...process.env, HOST: '127.0.0.1', TURNLINE_LOG: 'off' },
    nodeBackends,
  ).catch((error: unknown) => {
    if (!(error instanceof ConfigError)) throw error
    console.error(`turnline keys: ${error.message}`)
    process.exit(2)
  })
  store = deps.service.sessions.objects
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

const code = await runKeysCommand(argv, () => store, {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  stdin: readStdin,
  invoked,
})
process.exit(code)

/**
 * How the user ran this file, for the usage text: from source (this `.ts` file, through tsx)
 * that is the npm script; built, node on the file, named as from the working folder.
 */
function invocation(script: string): string {
  if (script.endsWith('.ts')) return 'npm run keys --'
  const path = relative(process.cwd(), script)
  return `node ${path.startsWith('..') || isAbsolute(path) ? script : path}`
}
