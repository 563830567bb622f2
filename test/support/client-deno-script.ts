import { TurnlineClient } from '../../client/index.ts'

/**
 * Run by `deno run --allow-net` (test/runtime/client-deno.test.ts): the client's sources in
 * Deno with no permission but the network, against the server named by the first argument.
 * Prints one JSON line with what it saw.
 */
const { args } = (globalThis as unknown as { Deno: { args: string[] } }).Deno
const client = new TurnlineClient({ baseUrl: args[0] ?? '' })
const { session_id } = await client.createSession({ workspace: 'deno' })
const turn = client.streamTurn(session_id, { input: 'Hello from Deno' })
const streamed: number[] = []
for await (const item of turn) streamed.push(item.seq)
const result = await turn.result()
await client.complete(session_id)
const followed: string[] = []
for await (const item of client.events(session_id, { follow: true })) followed.push(item.event.type)
const missing = await client
  .getSession('missing')
  .catch((error: { name: string; code: string }) => [error.name, error.code])
console.log(JSON.stringify({ streamed, status: result.status, followed, missing }))
