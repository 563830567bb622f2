import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { collect, repoRoot } from '../support/cli-process.ts'
import { type ServerProcess, startServerProcess } from '../support/server-process.ts'

const MARKER = '<!-- test/integration/readme-flow.test.ts runs the next block twice'

/** The README's curl flow, exactly as written there (only BASE points at the test's server). */
async function readmeBlock(): Promise<string> {
  const readme = await readFile(join(repoRoot, 'README.md'), 'utf8')
  const at = readme.indexOf(MARKER)
  expect(at, 'the README marks its curl flow').toBeGreaterThan(0)
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1]
  if (!block) throw new Error('no sh block after the README marker')
  expect(block).toMatch(/^BASE=http:\/\/127\.0\.0\.1:8787$/m)
  return block
}

let dir = ''
let server: ServerProcess

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-readme-'))
  // `npm start` with no configuration: the offline demo model answers.
  server = await startServerProcess({ TURNLINE_DATA_DIR: join(dir, 'data') })
}, 60_000)
afterAll(async () => {
  await server?.stop()
  await rm(dir, { recursive: true, force: true })
})

describe('the README', () => {
  it('runs its curl flow twice in a row, copying no ids by hand', async () => {
    const block = (await readmeBlock()).replace(/^BASE=.*$/m, `BASE=${server.url}`)
    for (const round of [1, 2]) {
      const child = spawn('bash', ['-euo', 'pipefail', '-c', block], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const run = await collect(child)
      expect(run.code, `round ${round}: ${run.stderr}`).toBe(0)
      const lines = run.stdout.trim().split('\n')
      expect(lines[0], `round ${round}`).toBe('completed')
      const events = lines.slice(1, -1).map((line) => JSON.parse(line) as { type: string })
      expect(events[0]?.type).toBe('thread.started')
      expect(events.map((e) => e.type)).toContain('turn.completed')
      expect(JSON.parse(lines.at(-1) ?? '')).toMatchObject({
        type: 'thread.completed',
        subtype: 'success',
      })
      expect(run.stdout).toContain('hello')
    }
  })
})
