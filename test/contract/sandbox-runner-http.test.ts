import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import { isTurnlineError } from '../../src/contract/errors.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { processesWith, waitFor } from '../support/proc-tree.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'
import { startRunnerProcess } from '../support/runner-process.ts'
import { value } from '../support/runner-results.ts'
import { sandboxRunnerSuite } from './sandbox-runner.suite.ts'
import { sandboxRunnerFilesSuite } from './sandbox-runner-files.suite.ts'

const fixture = useRunnerProcess('contract-runner', { callbacks: { failFirst: 1 } })
const { secret } = fixture

const underTest = () => ({ runner: fixture.client, root: fixture.root, receiver: fixture.receiver })
sandboxRunnerSuite('http client → runner process', underTest)
sandboxRunnerFilesSuite('http client → runner process', underTest)

describe('exec on a 10 MB command', () => {
  it('keeps every byte in the spool while captures stay bounded', async () => {
    const scope: SandboxScope = { tenant: 'acme', sessionId: 'big-output' }
    const line = '0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxy'
    const total = 10 * 1024 * 1024
    const started = value(
      await fixture.client.start(scope, {
        requestId: 'req_big_output_1',
        toolCallId: 'call_big',
        cmd: `yes ${line} | head -c ${total}`,
        tty: false,
        yieldTimeMs: 50,
        maxOutputBytes: 6144,
      }),
    )
    const done = value(
      await fixture.client.wait(scope, {
        execSessionId: started.execSessionId,
        timeoutMs: 20_000,
        maxOutputBytes: 6144,
        since: 0,
      }),
    )
    expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
    expect(done.totalOutputBytes).toBe(total)
    for (const snap of [started, done]) {
      expect(Buffer.byteLength(snap.output.head)).toBeLessThanOrEqual(6144)
      expect(Buffer.byteLength(snap.output.tail)).toBeLessThanOrEqual(6144)
    }
    expect(done.output).toMatchObject({ from: 0, to: total })
    expect(Buffer.byteLength(done.output.tail)).toBeGreaterThan(6000)
    expect(done.output.omittedBytes).toBe(
      done.output.to -
        done.output.from -
        Buffer.byteLength(done.output.head) -
        Buffer.byteLength(done.output.tail),
    )
    expect(done.spool.complete).toBe(true)

    const expected = `${line}\n`.repeat(Math.ceil(total / (line.length + 1))).slice(0, total)
    const onDisk = await readFile(join(fixture.root, 'acme', 'big-output', done.spool.path))
    expect(onDisk.byteLength).toBe(total)
    expect(createHash('sha256').update(onDisk).digest('hex')).toBe(
      createHash('sha256').update(expected).digest('hex'),
    )
    expect(done.output.tail).toBe(expected.slice(-Buffer.byteLength(done.output.tail)))

    const end = value(
      await fixture.client.readSpool(scope, {
        execSessionId: done.execSessionId,
        offset: total - 100,
        length: 1000,
      }),
    )
    expect(Buffer.from(end.bytes).toString()).toBe(expected.slice(-100))
    expect(end).toMatchObject({ totalOutputBytes: total, complete: true, eof: true })
    const first = value(
      await fixture.client.readSpool(scope, {
        execSessionId: done.execSessionId,
        offset: 0,
        length: 1 << 20,
      }),
    )
    expect(first.bytes.byteLength).toBe(1 << 20)
    expect(first.eof).toBe(false)
  })
})

describe('a start retried after the runner restarted', () => {
  it('re-attaches from the records on disk and never runs the command again', async () => {
    const ownRoot = await mkdtemp(join(tmpdir(), 'turnline-runner-restart-'))
    let own = await startRunnerProcess({ root: ownRoot, secret })
    try {
      const scope: SandboxScope = { tenant: 'acme', sessionId: 'restart' }
      const start = (c: HttpSandboxRunner, requestId: string, cmd: string) =>
        c.start(scope, {
          requestId,
          toolCallId: 'call_r',
          cmd,
          tty: false,
          yieldTimeMs: 100,
          maxOutputBytes: 4096,
        })
      let c = new HttpSandboxRunner({ url: own.url, secret })
      const finished = value(await start(c, 'req_restart_done', 'echo fin'))
      value(
        await c.wait(scope, {
          execSessionId: finished.execSessionId,
          timeoutMs: 5000,
          maxOutputBytes: 4096,
        }),
      )
      // The marker finds the command's processes on the host (see proc-tree.ts).
      const live = `echo once >> ran.txt; sleep 1 # restart-${crypto.randomUUID()}`
      const marker = live.slice(live.indexOf('restart-'))
      const running = value(await start(c, 'req_restart_live', live))
      expect(running.state.status).toBe('running')

      await own.crash()
      own = await startRunnerProcess({ root: ownRoot, secret })
      c = new HttpSandboxRunner({ url: own.url, secret })

      const again = value(await start(c, 'req_restart_done', 'echo fin'))
      expect(again).toMatchObject({
        execSessionId: finished.execSessionId,
        attached: true,
        state: { status: 'exited', exitCode: 0 },
        output: { head: 'fin\n' },
      })
      const lost = value(await start(c, 'req_restart_live', live))
      expect(lost).toMatchObject({ execSessionId: running.execSessionId, attached: true })
      expect(lost.state).toEqual({ status: 'lost' })
      // Not a quiet window: once no process of the command is left, the file is final.
      await waitFor(
        () => processesWith(marker).length === 0,
        () => `the command still runs: ${processesWith(marker).join(', ')}`,
      )
      expect(await readFile(join(ownRoot, 'acme', 'restart', 'ran.txt'), 'utf8')).toBe('once\n')
    } finally {
      await own.stop()
      await rm(ownRoot, { recursive: true, force: true })
    }
  })
})

describe('a runner that is down', () => {
  it('is runner_unavailable, retryable, for every call', async () => {
    const gone = await startRunnerProcess({ root: fixture.root, secret })
    await gone.stop()
    const down = new HttpSandboxRunner({ url: gone.url, secret, retries: 1 })
    const scope: SandboxScope = { tenant: 'acme', sessionId: 'down' }
    const calls = [
      () =>
        down.start(scope, {
          requestId: 'req_down_00001',
          toolCallId: 'c',
          cmd: 'true',
          tty: false,
          yieldTimeMs: 0,
          maxOutputBytes: 1024,
        }),
      () => down.readFile(scope, { path: 'x' }),
      () => down.applyPatch(scope, '*** Begin Patch\n*** Delete File: x\n*** End Patch'),
    ]
    for (const call of calls) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(isTurnlineError(error, 'runner_unavailable')).toBe(true)
      if (isTurnlineError(error)) {
        expect(error.retryable).toBe(true)
        expect(error.message).toContain('sandbox runner unreachable')
      }
    }
  })
})

describe('the spool file of a running command', () => {
  it('is a readable partial snapshot', async () => {
    const scope: SandboxScope = { tenant: 'acme', sessionId: 'partial' }
    const snap = value(
      await fixture.client.start(scope, {
        requestId: 'req_partial_01',
        toolCallId: 'c',
        cmd: 'echo early; sleep 5',
        tty: false,
        yieldTimeMs: 300,
        maxOutputBytes: 1024,
      }),
    )
    expect(snap.spool.complete).toBe(false)
    // The echo may come after the start's wait on a loaded machine: poll until it is counted
    // (a chunk is in the spool before it is counted).
    let counted = snap.totalOutputBytes
    for (let polls = 0; counted < 6 && polls < 50; polls++) {
      const polled = value(
        await fixture.client.poll(scope, {
          execSessionId: snap.execSessionId,
          yieldTimeMs: 100,
          maxOutputBytes: 1024,
        }),
      )
      expect(polled.spool.complete).toBe(false)
      counted = polled.totalOutputBytes
    }
    const info = await stat(join(fixture.root, 'acme', 'partial', snap.spool.path))
    expect(info.size).toBe(6)
    value(await fixture.client.close(scope, snap.execSessionId))
  })
})
