import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import type { SandboxRunner, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import type { startCallbackReceiver } from '../support/callback-receiver.ts'
import { processesWith, waitFor } from '../support/proc-tree.ts'
import { refusal, value } from '../support/runner-results.ts'

export interface RunnerUnderTest {
  runner: SandboxRunner
  /** The runner's root folder (workspaces are `<root>/<tenant>/<session>`). */
  root: string
  receiver?: Awaited<ReturnType<typeof startCallbackReceiver>>
}

let counter = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `suite-${++counter}` })

/** What every SandboxRunner must do, whatever carries it. */
export function sandboxRunnerSuite(name: string, make: () => RunnerUnderTest) {
  describe(`SandboxRunner: ${name}`, () => {
    let t: RunnerUnderTest
    beforeAll(() => {
      t = make()
    })
    const ws = (scope: SandboxScope, ...parts: string[]) =>
      join(t.root, scope.tenant, scope.sessionId, ...parts)
    const start = (scope: SandboxScope, cmd: string, extra: Record<string, unknown> = {}) =>
      t.runner.start(scope, {
        requestId: `req_${scope.sessionId}_${++counter}`,
        toolCallId: 'call_0',
        cmd,
        tty: false,
        yieldTimeMs: 200,
        maxOutputBytes: 4096,
        ...extra,
      })

    it('a command outlives a short wait; a later wait returns its exit code and output', async () => {
      const scope = fresh()
      const started = value(await start(scope, 'echo started; sleep 1.5; echo finished; exit 7'))
      expect(started.execSessionId).toMatch(/^run-[a-z0-9]+$/)
      expect(started).toMatchObject({ attached: false, backend: 'pipe', workdir: '.' })
      expect(started.state.status).toBe('running')
      expect(started.spool.path).toBe(
        `.vtcode/context/tool_outputs/write_stdin_${started.execSessionId}.txt`,
      )
      const id = started.execSessionId
      // The shell may echo after the start's wait on a loaded machine: read on until it has.
      let early = started.output.head
      for (let polls = 0; early.length < 'started\n'.length && polls < 50; polls++) {
        const polled = value(
          await t.runner.poll(scope, { execSessionId: id, yieldTimeMs: 100, maxOutputBytes: 4096 }),
        )
        expect(polled.state.status).toBe('running')
        early += polled.output.head
      }
      expect(early).toBe('started\n')
      const short = value(
        await t.runner.wait(scope, { execSessionId: id, timeoutMs: 300, maxOutputBytes: 4096 }),
      )
      expect(short.state.status).toBe('running')
      expect(short.wait?.timedOut).toBe(true)
      const done = value(
        await t.runner.wait(scope, { execSessionId: id, timeoutMs: 10_000, maxOutputBytes: 4096 }),
      )
      expect(done.state).toEqual({ status: 'exited', exitCode: 7 })
      expect(done.output.head).toBe('finished\n')
      expect(done.totalOutputBytes).toBe(17)
      expect(done.wait?.timedOut).toBe(false)
      expect(await readFile(ws(scope, done.spool.path), 'utf8')).toBe('started\nfinished\n')

      if (t.receiver) {
        const hit = await t.receiver.accepted(id)
        expect(hit.hmacValid).toBe(true)
        expect(hit.callback).toMatchObject({
          type: 'exec.exited',
          tenant: scope.tenant,
          session_id: scope.sessionId,
          exec_session_id: id,
          request_id: started.requestId,
          tool_call_id: 'call_0',
          exit_code: 7,
          total_output_bytes: 17,
          spool_path: started.spool.path,
          spool_complete: true,
          attempt: 2,
        })
        const attempts = t.receiver.received.filter((r) => r.callback?.exec_session_id === id)
        expect(attempts.map((r) => r.status)).toEqual([503, 204])
      }
    })

    it('writes to stdin; a trailing Ctrl-D closes it; a closed stdin refuses input', async () => {
      const scope = fresh()
      const cmd = 'while read line; do echo "got:$line"; done; echo eof'
      const id = value(await start(scope, cmd, { yieldTimeMs: 100 })).execSessionId
      const first = value(
        await t.runner.write(scope, {
          execSessionId: id,
          chars: 'a\nb\n',
          yieldTimeMs: 300,
          maxOutputBytes: 4096,
        }),
      )
      expect(first.state.status).toBe('running')
      // The shell may answer after the write's wait on a loaded machine: read on until it has.
      let echoed = first.output.head
      for (let polls = 0; echoed.length < 'got:a\ngot:b\n'.length && polls < 50; polls++) {
        const polled = value(
          await t.runner.poll(scope, { execSessionId: id, yieldTimeMs: 100, maxOutputBytes: 4096 }),
        )
        expect(polled.state.status).toBe('running')
        echoed += polled.output.head
      }
      expect(echoed).toBe('got:a\ngot:b\n')
      const closed = value(
        await t.runner.write(scope, {
          execSessionId: id,
          chars: 'c\n\u0004',
          yieldTimeMs: 2000,
          maxOutputBytes: 4096,
        }),
      )
      expect(closed.output.head).toBe('got:c\neof\n')
      expect(closed.state).toEqual({ status: 'exited', exitCode: 0 })
      const late = await t.runner.write(scope, {
        execSessionId: id,
        chars: 'x\n',
        yieldTimeMs: 0,
        maxOutputBytes: 64,
      })
      expect(refusal(late).code).toBe('conflict')
    })

    it('runs in a pseudo-terminal when asked', async () => {
      const scope = fresh()
      const started = value(
        await start(scope, 'test -t 0 && echo tty; read x; echo "x=$x"', { tty: true }),
      )
      expect(started.backend).toBe('pty')
      // Input typed before the shell has printed echoes first: wait for its line.
      let seen = started.output.head
      while (!seen.includes('tty') && started.state.status === 'running') {
        const polled = value(
          await t.runner.poll(scope, {
            execSessionId: started.execSessionId,
            yieldTimeMs: 100,
            maxOutputBytes: 4096,
          }),
        )
        seen += polled.output.head
        if (polled.state.status !== 'running') break
      }
      const done = value(
        await t.runner.write(scope, {
          execSessionId: started.execSessionId,
          chars: 'hi\n',
          yieldTimeMs: 3000,
          maxOutputBytes: 4096,
        }),
      )
      expect(`${seen}${done.output.head}`.replace(/\r/g, '')).toContain('tty\nhi\nx=hi\n')
      expect(done.state).toEqual({ status: 'exited', exitCode: 0 })
    })

    it('a start retried with the same request id re-attaches; the command ran once', async () => {
      const scope = fresh()
      const request = {
        requestId: `req_once_${counter}`,
        toolCallId: 'call_once',
        cmd: 'echo run >> ran.txt; sleep 0.5',
        tty: false,
        yieldTimeMs: 50,
        maxOutputBytes: 1024,
      }
      const [a, b] = await Promise.all([
        t.runner.start(scope, request),
        t.runner.start(scope, request),
      ])
      const c = await t.runner.start(scope, request)
      const ids = [value(a), value(b), value(c)].map((s) => s.execSessionId)
      expect(new Set(ids).size).toBe(1)
      expect([value(a).attached, value(b).attached].sort()).toEqual([false, true])
      expect(value(c).attached).toBe(true)
      value(
        await t.runner.wait(scope, { execSessionId: ids[0]!, timeoutMs: 5000, maxOutputBytes: 64 }),
      )
      expect(await readFile(ws(scope, 'ran.txt'), 'utf8')).toBe('run\n')
      const other = await t.runner.start(scope, { ...request, cmd: 'echo something else' })
      expect(refusal(other).code).toBe('conflict')
    })

    it('an unknown exec session is a not_found refusal', async () => {
      const result = await t.runner.poll(fresh(), {
        execSessionId: 'run-000000000000',
        yieldTimeMs: 0,
        maxOutputBytes: 64,
      })
      expect(refusal(result).code).toBe('not_found')
    })

    it('close ends the command and its whole process group', async () => {
      const scope = fresh()
      // A background child keeps stamping a file; once the group is gone the stamps stop. (Its
      // pid would not do: inside a sandbox it is a number of the sandbox's PID namespace; its
      // command line, which carries a marker, is seen on the host.)
      const marker = `beat-${crypto.randomUUID()}`
      const id = value(
        await start(
          scope,
          `(while :; do date +%s%N > beat.new; mv beat.new beat; sleep 0.05; done) & wait # ${marker}`,
          {
            yieldTimeMs: 300,
          },
        ),
      ).execSessionId
      expect(processesWith(marker)).not.toEqual([])
      // The loop's first stamp, which a loaded machine may not have run within the start's wait.
      await waitFor(
        () => existsSync(ws(scope, 'beat')),
        () => 'the command never stamped its file',
      )
      const began = Date.now()
      const closed = value(await t.runner.close(scope, id))
      expect(Date.now() - began).toBeLessThan(3000)
      expect(closed.state).toEqual({ status: 'exited', exitCode: 143 })
      const before = await readFile(ws(scope, 'beat'), 'utf8')
      // Not a quiet window: wait until no process of the command is left, then look again.
      await waitFor(
        () => processesWith(marker).length === 0,
        () => `processes of the closed command still run: ${processesWith(marker).join(', ')}`,
      )
      expect(before).toMatch(/^\d+/)
      expect(await readFile(ws(scope, 'beat'), 'utf8')).toBe(before)
    })
  })
}
