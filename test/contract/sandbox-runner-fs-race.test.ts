import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunnerResult, SandboxScope } from '../../src/ports/sandbox-runner.ts'
import { useRunnerProcess } from '../support/runner-fixture.ts'
import { refusal, value } from '../support/runner-results.ts'
import { untilOutput } from '../support/sandbox-commands.ts'

/**
 * The file tools against a command that swaps the path under them while they work: a folder and
 * a symlink to a host folder exchanged atomically (renameat2 RENAME_EXCHANGE) in a loop, a file
 * and a FIFO likewise. The runner (root) must never write, read or chown outside the workspace,
 * and never hang on a FIFO.
 */
const fixture = useRunnerProcess('fs-race')
let outside: string
let sessions = 0
let requests = 0
const fresh = (): SandboxScope => ({ tenant: 'acme', sessionId: `race-${++sessions}` })

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'turnline-race-outside-'))
  await chmod(outside, 0o755)
  await writeFile(join(outside, 'x.txt'), 'outside-original\n')
  await writeFile(join(outside, 'secret.txt'), 'outside-secret\n')
})

afterAll(async () => {
  if (outside) await rm(outside, { recursive: true, force: true })
})

/** python3 exchanging two names forever (renameat2 is syscall 316 on x86_64, 276 on arm64). */
const flipper = (setup: string, a: string, b: string) =>
  `python3 -c '
import ctypes, os
${setup}
nr = {"x86_64": 316, "aarch64": 276}[os.uname().machine]
libc = ctypes.CDLL(None, use_errno=True)
args = [ctypes.c_long(nr), ctypes.c_long(-100), ctypes.c_char_p(b"${a}"), ctypes.c_long(-100), ctypes.c_char_p(b"${b}"), ctypes.c_long(2)]
print("flipping", flush=True)
while True:
    if libc.syscall(*args) != 0:
        raise SystemExit("renameat2: errno %d" % ctypes.get_errno())
'`

/** Starts the flipper in the background of `scope` and resolves once it flips. */
async function startFlipper(scope: SandboxScope, cmd: string): Promise<string> {
  requests += 1
  const started = value(
    await fixture.client.start(scope, {
      requestId: `req_race_${requests}`,
      toolCallId: `call_${requests}`,
      cmd,
      tty: false,
      yieldTimeMs: 0,
      maxOutputBytes: 4096,
    }),
  )
  await untilOutput(fixture.client, scope, started.execSessionId, 'flipping')
  return started.execSessionId
}

/** Runs `count` calls, `width` at a time; every result, in order. */
async function many<T>(count: number, width: number, call: (i: number) => Promise<T>) {
  const results: T[] = []
  let next = 0
  const lane = async () => {
    while (next < count) {
      const i = next++
      results[i] = await call(i)
    }
  }
  await Promise.all(Array.from({ length: width }, lane))
  return results
}

/** A refusal must be one of the expected ones, and no call failed; the number of successes. */
function tally(results: RunnerResult<unknown>[], label: string): number {
  expect(fixture.runner.output()).not.toContain('runner_error')
  for (const result of results) {
    if (!result.ok) {
      expect(`${label}: ${result.refusal.code}`).toMatch(
        /: (path_escape|not_found|conflict|invalid_input|patch_failed)$/,
      )
    }
  }
  return results.filter((r) => r.ok).length
}

async function outsideUntouched() {
  expect((await readdir(outside)).sort()).toEqual(['secret.txt', 'x.txt'])
  expect(await readFile(join(outside, 'x.txt'), 'utf8')).toBe('outside-original\n')
  expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('outside-secret\n')
  for (const name of ['', 'x.txt', 'secret.txt']) {
    const info = await stat(join(outside, name))
    expect([name, info.uid, info.gid]).toEqual([name, 0, 0])
  }
}

describe('a folder exchanged with a symlink to a host folder, in a loop', () => {
  it('write_file, read_file and apply_patch never land, read or chown outside', {
    timeout: 300_000,
  }, async () => {
    const scope = fresh()
    const id = await startFlipper(
      scope,
      flipper(
        `os.makedirs("d", exist_ok=True)\nopen("d/x.txt", "w").write("inside\\n")\nos.symlink("${outside}", "s")`,
        'd',
        's',
      ),
    )
    const descriptors = fixture.runner.openDescriptors()
    try {
      const writes = await many(1000, 4, (i) =>
        fixture.client.writeFile(scope, { path: 'd/x.txt', content: `written-${i}\n` }),
      )
      await outsideUntouched()
      const reads = await many(1000, 4, (i) =>
        fixture.client.readFile(scope, { path: i % 2 ? 'd/x.txt' : 'd/secret.txt' }),
      )
      const patches = await many(200, 4, (i) =>
        fixture.client.applyPatch(
          scope,
          [
            '*** Begin Patch',
            `*** Add File: d/p${i}.txt`,
            '+patched',
            ...(i % 2 ? ['*** Delete File: d/x.txt'] : []),
            '*** End Patch',
          ].join('\n'),
        ),
      )
      for (const read of reads) {
        if (read.ok) expect(read.value.content).toMatch(/^(inside|written-\d+)\n$/)
      }
      expect(tally(writes, 'write')).toBeGreaterThan(0)
      expect(tally(reads, 'read')).toBeGreaterThan(0)
      expect(tally(patches, 'patch')).toBeGreaterThan(0)
      await outsideUntouched()
      // Every descriptor a walk opened was closed again (a few may come and go with requests).
      expect(fixture.runner.openDescriptors()).toBeLessThan(descriptors + 8)
    } finally {
      await fixture.client.close(scope, id)
    }
    await outsideUntouched()
  })
})

describe('a FIFO where a file is expected', () => {
  it('is refused at once by read_file, write_file and apply_patch, also through a symlink', async () => {
    const scope = fresh()
    requests += 1
    value(
      await fixture.client.start(scope, {
        requestId: `req_race_${requests}`,
        toolCallId: 'call_fifo',
        cmd: 'mkfifo pipe && ln -s pipe link',
        tty: false,
        yieldTimeMs: 5000,
        maxOutputBytes: 4096,
      }),
    )
    const refused = [
      refusal(await fixture.client.readFile(scope, { path: 'pipe' })),
      refusal(await fixture.client.readFile(scope, { path: 'link' })),
      refusal(await fixture.client.writeFile(scope, { path: 'pipe', content: 'x' })),
      refusal(await fixture.client.writeFile(scope, { path: 'link', content: 'x' })),
      refusal(
        await fixture.client.applyPatch(
          scope,
          '*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch',
        ),
      ),
    ]
    for (const r of refused) {
      expect(r.code).toBe('invalid_input')
      expect(r.message).toMatch(/not a regular file/)
    }
  })

  it('exchanged with a file in a loop, never hangs a read or a write', {
    timeout: 300_000,
  }, async () => {
    const scope = fresh()
    const id = await startFlipper(
      scope,
      flipper('open("f", "w").write("file\\n")\nos.mkfifo("p")', 'f', 'p'),
    )
    try {
      // Reads alone, then writes alone: a read and a write blocked on one FIFO would free each other.
      const reads = await many(300, 4, () => fixture.client.readFile(scope, { path: 'f' }))
      expect(tally(reads, 'fifo race, reads')).toBeGreaterThan(0)
      const writes = await many(300, 4, (i) =>
        fixture.client.writeFile(scope, { path: 'f', content: `w${i}\n` }),
      )
      expect(tally(writes, 'fifo race, writes')).toBeGreaterThan(0)
    } finally {
      await fixture.client.close(scope, id)
    }
  })
})
