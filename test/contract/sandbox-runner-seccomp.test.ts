import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERRNO, seccompArch } from '../../adapters/runner/seccomp-filter.ts'
import { DENIED_SYSCALLS } from '../../adapters/runner/seccomp-syscalls.ts'
import type { HttpSandboxRunner } from '../../adapters/sandbox-http/http-sandbox-runner.ts'
import type { SandboxScope } from '../../src/ports/sandbox-runner.ts'
import type { RunnerProcess } from '../support/runner-process.ts'
import { runnerWithClient, runToEnd } from '../support/sandbox-commands.ts'

/**
 * The seccomp filter of the reference runner's sandbox, seen from a command (real runner process,
 * real bubblewrap, python3's ctypes making the calls): each denied call fails with its errno,
 * and ordinary tools keep working.
 */
const secret = 'seccomp-runner-secret-0123456789'
let root: string
let runner: RunnerProcess
let client: HttpSandboxRunner
let sessions = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `seccomp-${++sessions}` })
const arch = seccompArch()

beforeAll(async () => {
  if (!arch) throw new Error(`no seccomp table for ${process.arch}: these tests need one`)
  root = await mkdtemp(join(tmpdir(), 'turnline-seccomp-'))
  ;({ process: runner, client } = await runnerWithClient({ root, secret }))
})

afterAll(async () => {
  await runner?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

/**
 * Arguments that make each denied call do nothing harmful where it is not filtered (so a run
 * without the filter fails on the errno, not on a side effect): a pid that does not exist for
 * ptrace, CLONE_NEWNS with CLONE_FS (which the kernel itself refuses with EINVAL) for clone.
 */
const ARGS: Record<string, number[]> = {
  ptrace: [16, 999_999, 0, 0],
  unshare: [0x40000000],
  clone: [0x00020000 | 0x00000200, 0, 0, 0, 0],
}

/** A python3 line calling `nr(args)` for each call and printing `name errno` (0 on success). */
const callsLine = (calls: [string, number, number[]][]) =>
  `python3 -c '
import ctypes, json
libc = ctypes.CDLL(None, use_errno=True)
for name, nr, args in json.loads(${JSON.stringify(JSON.stringify(calls))}):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
    print(name, 0 if r >= 0 else ctypes.get_errno())
'`

describe('the seccomp filter', () => {
  it('the runner reports it, and it is in force in a command', async () => {
    expect(runner.output()).toContain(`"seccomp":"${arch}"`)
    const { output } = await runToEnd(client, fresh(), 'grep "^Seccomp:" /proc/self/status')
    expect(output).toMatch(/^Seccomp:\s+2$/m)
  })

  it('each denied call fails with its errno (ENOSYS for io_uring and clone3, else EPERM)', async () => {
    const calls = DENIED_SYSCALLS.flatMap((call): [string, number, number[]][] => {
      const nr = arch ? call.nr[arch] : undefined
      return nr === undefined ? [] : [[call.name, nr, ARGS[call.name] ?? [0, 0, 0, 0, 0]]]
    })
    const { output, exitCode } = await runToEnd(client, fresh(), callsLine(calls))
    expect(exitCode, output).toBe(0)
    const got = Object.fromEntries(
      output
        .trim()
        .split('\n')
        .map((line) => line.split(' ')),
    )
    const expected = Object.fromEntries(
      calls.map(([name]) => {
        const call = DENIED_SYSCALLS.find((c) => c.name === name)
        return [name, String(call ? ERRNO[call.errno] : -1)]
      }),
    )
    expect(got).toEqual(expected)
  })

  it('what the filter lets through still works: ptrace by a parent, unshare of files, fork', async () => {
    const { output, exitCode } = await runToEnd(
      client,
      fresh(),
      `python3 -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
ptrace, unshare = (101, 272) if os.uname().machine == "x86_64" else (117, 97)
child = os.fork()
if child == 0:
    os._exit(0 if libc.syscall(ctypes.c_long(ptrace), ctypes.c_long(0), 0, 0, 0) == 0 else 1)
print("traceme", os.waitpid(child, 0)[1])
print("unshare-files", libc.syscall(ctypes.c_long(unshare), ctypes.c_long(0x400)))
'`,
    )
    expect(exitCode, output).toBe(0)
    expect(output).toBe('traceme 0\nunshare-files 0\n')
  })

  it("another ABI's call ends the process (x32); the init's memory is out of reach", async () => {
    const x32 = arch === 'x86_64'
    const { output } = await runToEnd(
      client,
      fresh(),
      [
        x32
          ? `python3 -c 'import ctypes; ctypes.CDLL(None).syscall(ctypes.c_long(0x40000000 | 39))'; echo "x32=$?"`
          : 'echo x32=159',
        'head -c 1 /proc/1/mem; echo "mem=$?"',
        'head -c 1 /proc/1/task/1/mem; echo "task-mem=$?"',
      ].join('; '),
    )
    expect(output).toMatch(/^x32=159$/m)
    expect(output).toMatch(/^mem=1$/m)
    expect(output).toMatch(/^task-mem=1$/m)
  })

  it('ordinary tools work: sh, git, python3, node; curl to a refused port fails as a network error', async () => {
    const { output, exitCode } = await runToEnd(
      client,
      fresh(),
      [
        'set -e',
        'git init -q repo && cd repo',
        'echo hi > a.txt && git add a.txt',
        'git -c user.email=t@example.com -c user.name=t commit -q -m first',
        'git log --format=%s',
        'python3 -c "import sqlite3, multiprocessing as m; print(sum(m.Pool(2).map(abs, [1, -2])))"',
        "node -e \"require('fs').promises.readFile('a.txt', 'utf8').then((t) => console.log('node', t.trim()))\"",
        'set +e',
        'curl -sS --max-time 5 http://127.0.0.1:9/; echo "curl=$?"',
      ].join('\n'),
    )
    expect(output).toContain('first\n3\nnode hi\n')
    expect(output).toMatch(/curl: \(7\) Failed to connect/)
    expect(output).toMatch(/^curl=7$/m)
    expect(exitCode, output).toBe(0)
  })
})
