import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEnv, type TargetContext } from '../../bench/support/cold-start-targets.ts'
import { type PeerProcesses, startPeerProcesses } from '../../bench/support/peer-processes.ts'
import { sameWorkTargets } from '../../bench/support/same-work-targets.ts'
import { ANSWER } from '../../bench/support/turn-cost-scenario.ts'
import { freePort, startRuntime } from '../support/runtime-process.ts'

const root = join(import.meta.dirname, '../..')

/**
 * The same-work app bench/cold-start-platforms.ts compares Turnline's cold start with, started as
 * the bench starts it on each runtime, against the bench's own mock model and tool receiver (each
 * its own process): one POST runs the raw loop's turn — the tool called with a valid signature,
 * the session file holding its header and both steps — and answers with the model's final text.
 */
describe('the same-work app of the cold-start bench', () => {
  let peers: PeerProcesses
  let scratch = ''
  let ctx: TargetContext
  beforeAll(async () => {
    peers = await startPeerProcesses(true)
    scratch = await mkdtemp(join(tmpdir(), 'turnline-same-work-'))
    ctx = { here: root, scratch, env: startEnv(peers.mock.baseURL) }
  })
  afterAll(async () => {
    await peers?.close()
    if (scratch) await rm(scratch, { recursive: true, force: true })
  })

  it.each([
    ['node', 'tsx'],
    ['built', 'plain node, bundled'],
    ['deno', 'deno serve'],
  ])(
    '%s (%s): one POST is the raw loop’s turn, answered after both steps are written',
    async (runtime) => {
      const tool = { url: peers.toolUrl, secret: peers.toolSecret }
      const [target] = await sameWorkTargets(ctx, [runtime], tool)
      if (!target) throw new Error(`no same-work target for ${runtime}`)
      const port = await freePort()
      const dir = join(scratch, runtime)
      const command = await target.command(port, dir)
      const app = await startRuntime({
        name: target.name,
        command: command.file,
        args: command.args,
        env: command.env,
        cwd: command.cwd ?? root,
        port,
        readyTimeoutMs: 30_000,
        readyStatus: 404,
      })
      try {
        const calls = await peers.toolCalls()
        const answer = await fetch(`${app.url}/turn`, {
          method: 'POST',
          body: JSON.stringify({ input: 'step 1' }),
        })
        expect(answer.status).toBe(200)
        const body = (await answer.json()) as { session: string; text: string }
        expect(body.text).toBe(ANSWER)
        expect(await peers.toolCalls()).toBe(calls + 1)
        // Both model requests were the ones the mock expects (a tool call, then the answer).
        await peers.forget()
        const file = await readFile(join(dir, 'data', `${body.session}.jsonl`), 'utf8')
        const [header, first, second, ...rest] = file
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as { session?: string; messages?: unknown[] })
        expect(rest).toEqual([])
        expect(header?.session).toBe(body.session)
        expect(first?.messages).toMatchObject([
          { role: 'user', content: 'step 1' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ function: { name: 'lookup', arguments: '{"q":"step 1"}' } }],
          },
        ])
        expect(second?.messages).toMatchObject([
          { role: 'tool' },
          { role: 'assistant', content: ANSWER },
        ])
      } finally {
        await app.stop()
      }
    },
  )
})
