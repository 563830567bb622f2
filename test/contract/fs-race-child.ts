/**
 * Child process for the fs ObjectStore cross-process races. Prints "ready", waits for "go" on
 * stdin so every child starts together, runs one scenario and prints a JSON result.
 *
 *   create    <root> <key> <id>            create-only put of "writer <id>"
 *   cas       <root> <key> <id> <etag>     ifMatch put of "update <id>"
 *   increment <root> <key> <id> <times>    read-modify-write a counter with CAS retries
 */
import { createInterface } from 'node:readline'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'

const [mode, root, key, id, extra] = process.argv.slice(2)
if (!mode || !root || !key || !id) throw new Error('usage: <mode> <root> <key> <id> [extra]')
const store = new FsObjectStore({ root })
const encode = (text: string) => new TextEncoder().encode(text)

async function attempt(run: () => Promise<unknown>): Promise<string> {
  try {
    await run()
    return 'ok'
  } catch (error) {
    if (isTurnlineError(error)) return error.code
    throw error
  }
}

async function increment(times: number): Promise<{ conflicts: number }> {
  let conflicts = 0
  for (let done = 0; done < times; ) {
    const current = await store.get(key!)
    const value = current ? Number(new TextDecoder().decode(current.body)) : 0
    const body = encode(String(value + 1))
    const options = current ? { ifMatch: current.etag } : { ifNoneMatch: '*' as const }
    const result = await attempt(() => store.put(key!, body, options))
    if (result === 'ok') done++
    else if (result === 'conflict') conflicts++
    else throw new Error(`unexpected ${result}`)
  }
  return { conflicts }
}

async function run(): Promise<unknown> {
  if (mode === 'create') {
    return {
      outcome: await attempt(() => store.put(key!, encode(`writer ${id}`), { ifNoneMatch: '*' })),
    }
  }
  if (mode === 'cas') {
    return {
      outcome: await attempt(() => store.put(key!, encode(`update ${id}`), { ifMatch: extra! })),
    }
  }
  if (mode === 'increment') return increment(Number(extra))
  throw new Error(`unknown mode ${mode}`)
}

process.stdout.write('ready\n')
const lines = createInterface({ input: process.stdin })
for await (const line of lines) {
  if (line.trim() !== 'go') continue
  process.stdout.write(`${JSON.stringify(await run())}\n`)
  break
}
lines.close()
