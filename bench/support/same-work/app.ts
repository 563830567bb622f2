import { mkdir } from 'node:fs/promises'
import { env } from 'node:process'
import { Hono } from 'hono'
import { rawSession } from '../raw-loop.ts'

/**
 * The same-work floor of bench/cold-start-platforms.ts: a minimal Hono app whose POST runs the
 * raw loop's one turn (bench/support/raw-loop.ts: a session file created and fsynced, a streamed
 * model request that calls the signed HTTP tool, the step appended and fsynced, the tool POST,
 * the streamed answer appended and fsynced) and answers with the answer's text once it is on
 * disk. What Turnline's first turn does, without Turnline: its start and its first answer measure
 * the runtime, the turn's own work and the peers, not our code.
 *
 *   TURNLINE_DATA_DIR      where each POST's session file (`<id>.jsonl`) goes (made at start)
 *   OPENAI_BASE_URL        the mock model
 *   SAME_WORK_TOOL_URL     the tool receiver
 *   SAME_WORK_TOOL_SECRET  the tenant's signing secret (what Turnline derives from its master secret)
 *
 * Run by `deno serve` as it is, on Node by node.ts (through tsx, or bundled by esbuild).
 */
const need = (name: string): string => {
  const value = env[name]
  if (!value) throw new Error(`the same-work app needs ${name}`)
  return value
}
const dir = need('TURNLINE_DATA_DIR')
const baseURL = need('OPENAI_BASE_URL')
const toolUrl = need('SAME_WORK_TOOL_URL')
const toolSecret = need('SAME_WORK_TOOL_SECRET')
await mkdir(dir, { recursive: true })

export const sameWorkApp = new Hono().post('*', async (c) => {
  const { input } = (await c.req.json()) as { input: string }
  const id = crypto.randomUUID()
  const session = await rawSession({ dir, id, baseURL, toolUrl, toolSecret })
  return c.json({ session: id, text: await session.turn(input) })
})

export default { fetch: sameWorkApp.fetch }
