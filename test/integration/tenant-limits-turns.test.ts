import { chmod, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandTurns } from '../support/command-turns.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'

/**
 * One tenant attacks what all tenants share from where a tenant really stands — turns on
 * `npm start` with several tenants and the embedded runner — and stops at its own limits while
 * the other tenant's turns still run their commands.
 */
const ACME_KEY = 'acme-api-key-limits-0123456789'
const GLOBEX_KEY = 'globex-api-key-limits-0123456789'
/** The disk attacker: acme's bomb keeps its processes while the other test runs. */
const INITECH_KEY = 'initech-api-key-limits-0123456789'

let tempDir: string
let mock: MockOpenAI
let server: NodeEntry
let turns: ReturnType<typeof commandTurns>

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('run as root: tenant limits need a root runner')
  tempDir = await mkdtemp(join(tmpdir(), 'turnline-limit-turns-'))
  await chmod(tempDir, 0o711)
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: join(tempDir, 'data'),
    TURNLINE_API_KEYS: `${ACME_KEY}=acme,${GLOBEX_KEY}=globex,${INITECH_KEY}=initech`,
    OPENAI_API_KEY: 'sk-limits-test',
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_SANDBOX_MAX_PROCESSES: '200',
    TURNLINE_SANDBOX_TENANT_PROCESSES: '48',
    TURNLINE_SANDBOX_TENANT_DISK_MB: '32',
    TURNLINE_SANDBOX_DISK_CHECK_SECONDS: '1',
  })
  turns = commandTurns(await server.listening(), mock)
})

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

/** What the model was told by the last tool call: the runner's answer, or its refusal. */
function lastToolAnswer(): string {
  const messages = (mock.requests.at(-1)?.body.messages ?? []) as {
    role: string
    content: string
  }[]
  return messages.findLast((m) => m.role === 'tool')?.content ?? ''
}

describe("a tenant's turns stop at the tenant's limits; another tenant's turns go on", () => {
  it("a fork bomb stops at the tenant's process limit", async () => {
    const acme = await turns.createSession(ACME_KEY)
    // One command, far below its own limit (200), far above the tenant's (48).
    const bomb = await turns.runInTurn(
      ACME_KEY,
      acme,
      'for i in $(seq 100); do sleep 120 & done 2>&1; echo "bomb done"',
    )
    expect(bomb).toMatch(/fork|Resource temporarily unavailable/i)

    const globex = await turns.createSession(GLOBEX_KEY)
    const other = await turns.runInTurn(
      GLOBEX_KEY,
      globex,
      'for i in $(seq 30); do sleep 0.2 & done; wait; echo forked-30',
    )
    expect(other).toContain('forked-30')
  })

  it("fallocate past the tenant's disk quota: its next command is refused, saying why", async () => {
    const initech = await turns.createSession(INITECH_KEY)
    expect(
      await turns.runInTurn(INITECH_KEY, initech, 'fallocate -l 48M big && echo made'),
    ).toContain('made')
    mock.enqueue(
      { toolCalls: [{ id: 'call_refused', name: 'exec_command', arguments: '{"cmd":"true"}' }] },
      { text: 'done' },
    )
    const refused = await turns.api(INITECH_KEY, `/v1/sessions/${initech}/turns`, {
      input: 'again',
    })
    expect(refused.status).toBe('completed')
    expect(lastToolAnswer()).toMatch(
      /over its disk quota of 32 MiB \(TURNLINE_SANDBOX_TENANT_DISK_MB\)/,
    )

    const globex = await turns.createSession(GLOBEX_KEY)
    expect(await turns.runInTurn(GLOBEX_KEY, globex, 'echo still-fine')).toContain('still-fine')
  })
})
