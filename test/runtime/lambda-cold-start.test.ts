import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEnv, type Target } from '../../bench/support/cold-start-targets.ts'
import { type LambdaFront, startLambdaFront } from '../../bench/support/lambda/front.ts'
import { type LambdaTargets, lambdaTargets } from '../../bench/support/lambda/targets.ts'
import { type PeerProcesses, startPeerProcesses } from '../../bench/support/peer-processes.ts'
import { ANSWER } from '../../bench/support/turn-cost-scenario.ts'
import { httpClientVariant } from '../../bench/support/turnline-variants.ts'

const root = join(import.meta.dirname, '../..')

/**
 * The Lambda starts of bench/cold-start-platforms.ts, made as the bench makes them: each function
 * in a fresh node process under the bench's bootstrap, reached through the bench's function URL
 * and Runtime API (bench/support/lambda/), against the bench's mock model and tool receiver
 * processes, Turnline on S3 (moto), Upstash and the SQS work queue. What the bench times must be
 * the real answers: the trivial app's echo, the same-work app's and Turnline's turn with the tool
 * called once with a valid signature and the mock's two expected requests. A function whose init
 * fails reports it on the Runtime API, and the bench sees why.
 */
describe('the Lambda starts of the cold-start bench', () => {
  let peers: PeerProcesses
  let scratch = ''
  let lambda: LambdaTargets
  beforeAll(async () => {
    peers = await startPeerProcesses(true)
    scratch = await mkdtemp(join(tmpdir(), 'turnline-lambda-start-'))
    const ctx = { here: root, scratch, env: startEnv(peers.mock.baseURL) }
    lambda = await lambdaTargets(ctx, ['lambda'], { url: peers.toolUrl, secret: peers.toolSecret })
  }, 180_000)
  afterAll(async () => {
    await lambda?.close()
    await peers?.close()
    if (scratch) await rm(scratch, { recursive: true, force: true })
  })

  const named = (part: string): Target => {
    const target = lambda.targets.find((t) => t.name.includes(part))
    if (!target) throw new Error(`no Lambda target named ${part}`)
    return target
  }

  /** The function started on its own function URL and Runtime API; `stop` ends both. */
  async function start(target: Target, change: (env: Record<string, string>) => void = () => {}) {
    const front = await startLambdaFront()
    const command = await target.command(front.runtimePort, join(scratch, crypto.randomUUID()))
    change(command.env)
    const child: ChildProcess = spawn(command.file, command.args, {
      cwd: command.cwd ?? root,
      env: command.env,
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    const exited = once(child, 'exit') as Promise<[number | null]>
    const stop = async () => {
      if (child.exitCode === null) child.kill('SIGKILL')
      await exited
      await front.close()
    }
    return { front, exited, stop }
  }

  const post = (front: LambdaFront) =>
    fetch(`${front.url}/turn`, { method: 'POST', body: JSON.stringify({ input: 'step 1' }) })

  it('the trivial app answers each request with the prelude’s status and headers, then its body', async () => {
    const { front, stop } = await start(named('trivial'))
    try {
      const first = await post(front)
      expect(await front.initEnded).toBeLessThan(performance.now())
      expect(first.status).toBe(200)
      expect(first.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await first.json()).toEqual({ echo: { input: 'step 1' } })
      // The bootstrap loops: a second invocation on the same process.
      expect(await (await post(front)).json()).toEqual({ echo: { input: 'step 1' } })
    } finally {
      await stop()
    }
  })

  it('the same-work app answers with the model’s text after the raw loop’s turn', async () => {
    const { front, stop } = await start(named('same-work'))
    try {
      const calls = await peers.toolCalls()
      const answer = await post(front)
      expect(((await answer.json()) as { text: string }).text).toBe(ANSWER)
      expect(await peers.toolCalls()).toBe(calls + 1)
      await peers.forget()
    } finally {
      await stop()
    }
  })

  it.each(['S3', 'memory store'])(
    'Turnline’s Lambda bundle (%s): a session created and its first turn answered',
    async (part) => {
      const target = named(part === 'S3' ? 'index.handler' : part)
      const { front, stop } = await start(target)
      try {
        const calls = await peers.toolCalls()
        const client = httpClientVariant(target.name, front.url, peers, async () => 0, target.auth)
        const session = await client.newSession(0)
        // Checks the answer: the model's final text after one tool call.
        await session.turn('step 1', 'lambda-start-1')
        expect(await peers.toolCalls()).toBe(calls + 1)
        await peers.forget()
      } finally {
        await stop()
      }
    },
  )

  it('an init that fails is posted to the Runtime API, and the process exits', async () => {
    const { front, exited, stop } = await start(named('memory store'), (env) => {
      delete env.TURNLINE_API_KEYS
    })
    try {
      await expect(front.failed).rejects.toThrow(/\/init\/error.*TURNLINE_API_KEYS/s)
      expect((await exited)[0]).toBe(1)
    } finally {
      await stop()
    }
  })
})
