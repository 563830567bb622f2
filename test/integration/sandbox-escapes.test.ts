import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commandTurns } from '../support/command-turns.ts'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type NodeEntry, startNodeEntry } from '../support/node-entry.ts'
import { tenantUid } from '../support/tenant-uid.ts'

/**
 * The escapes of the hardening issue, tried from turns: `npm start` with several tenants, the
 * model's secrets and a tool secret in its environment, the reference runner in-process. A
 * tenant's exec_command (and its command hooks) must see none of it.
 */
const OPENAI_KEY = 'sk-server-openai-key-never-for-commands'
const TOOL_SECRET = 'tool-secret-never-for-commands-0123'
const ACME_KEY = 'acme-api-key-0123456789'
const GLOBEX_KEY = 'globex-api-key-0123456789'
const secrets = [OPENAI_KEY, TOOL_SECRET, ACME_KEY, GLOBEX_KEY]
/** Each tenant's commands run as a uid of its own (the runner runs as root in the tests). */
const sandboxUid = (tenant = 'acme') => tenantUid(workspaces, tenant)

let tempDir: string
let dataDir: string
/** The runner's workspaces: by default beside the data dir, never inside it. */
let workspaces: string
let mock: MockOpenAI
let server: NodeEntry
let url: string
let createSession: ReturnType<typeof commandTurns>['createSession']
let runInTurn: ReturnType<typeof commandTurns>['runInTurn']
let api: ReturnType<typeof commandTurns>['api']

beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), 'turnline-escapes-'))
  // The sandbox user must get through to the workspaces (mkdtemp makes the folder 0700).
  await chmod(tempDir, 0o711)
  dataDir = join(tempDir, 'data')
  workspaces = join(tempDir, 'data-runner')
  mock = await startMockOpenAI()
  server = startNodeEntry({
    PORT: '0',
    TURNLINE_DATA_DIR: dataDir,
    TURNLINE_API_KEYS: `${ACME_KEY}=acme,${GLOBEX_KEY}=globex`,
    OPENAI_API_KEY: OPENAI_KEY,
    OPENAI_BASE_URL: mock.baseURL,
    TURNLINE_MODEL: 'gpt-4o-mini',
    TURNLINE_TOOL_SECRET: TOOL_SECRET,
  })
  url = await server.listening()
  ;({ api, createSession, runInTurn } = commandTurns(url, mock))
})

afterAll(async () => {
  await server?.stop()
  await mock?.close()
  if (tempDir) await rm(tempDir, { recursive: true, force: true })
})

/** Every file under `dir` (host side), relative paths. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true })
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
}

describe('commands run from a turn, with several tenants on the server', () => {
  it('the server started the in-process runner sandboxed and said so', () => {
    expect(server.output()).toMatch(/sandbox: commands run in bubblewrap/)
    expect(server.output()).not.toMatch(/UNSANDBOXED/)
  })

  it("cannot read the server's secrets through /proc/$PPID/environ or anywhere in /proc", async () => {
    const session = await createSession(ACME_KEY)
    const output = await runInTurn(
      ACME_KEY,
      session,
      "tr '\\0' '\\n' < /proc/$PPID/environ; echo; cat /proc/*/environ | tr '\\0' '\\n'; env",
    )
    expect(output).toContain('HOME=')
    for (const secret of secrets) expect(output).not.toContain(secret)
    expect(output).not.toMatch(/OPENAI|TURNLINE_/)
  })

  it("cannot read or write another tenant's workspace, nor the data dir with the session logs", async () => {
    const globex = await createSession(GLOBEX_KEY)
    await runInTurn(GLOBEX_KEY, globex, 'echo globex-private > secret.txt')
    const theirs = join(workspaces, 'globex', globex)
    expect(await readFile(join(theirs, 'secret.txt'), 'utf8')).toBe('globex-private\n')
    const logs = await filesUnder(dataDir)
    // The session store holds no workspace: the runner's tree is apart from the tenants' folders.
    expect(logs.filter((f) => f.includes('secret.txt'))).toEqual([])
    const log = logs.find((f) => f.includes(globex))
    expect(log, logs.join('\n')).toBeDefined()

    const acme = await createSession(ACME_KEY)
    const output = await runInTurn(
      ACME_KEY,
      acme,
      [
        `cat ${join(theirs, 'secret.txt')}; echo "read=$?"`,
        `echo pwned > ${join(theirs, 'pwned.txt')}; echo "write=$?"`,
        `cat ${join(dataDir, log ?? '')}; echo "log=$?"`,
        `ls ${dataDir}; echo "data=$?"`,
      ].join('; '),
    )
    expect(output).not.toContain('globex-private')
    expect(output).not.toContain(`"session_id":"${globex}"`)
    expect(output).toMatch(/read=1/)
    expect(output).toMatch(/write=[12]/)
    expect(output).toMatch(/log=1/)
    await expect(stat(join(theirs, 'pwned.txt'))).rejects.toThrow()
  })

  it("swapping its output spool for a symlink shows its own output, not the server's environment or another tenant's log", async () => {
    const globex = await createSession(GLOBEX_KEY)
    await runInTurn(GLOBEX_KEY, globex, 'echo globex-conversation-private')
    const theirLog = (await filesUnder(dataDir)).find(
      (f) => !f.startsWith('runner/') && f.includes(globex) && f.includes('/log/'),
    )
    expect(theirLog).toBeDefined()
    const session = await createSession(ACME_KEY)
    for (const target of ['/proc/self/environ', join(dataDir, theirLog ?? '')]) {
      const spool = '.vtcode/context/tool_outputs/write_stdin_$VTCODE_EXEC_SESSION_ID.txt'
      const output = await runInTurn(
        ACME_KEY,
        session,
        `head -c 2000 /dev/zero | tr '\\0' a; f=${spool}; rm -f "$f"; ln -s ${target} "$f"; echo; echo swapped`,
      )
      for (const secret of secrets) expect(output).not.toContain(secret)
      expect(output).not.toMatch(/OPENAI|TURNLINE_|globex-conversation-private/)
      expect(output).toMatch(/^a+\nswapped\n$/)
    }
    const seen = JSON.stringify(mock.requests.map((r) => r.body))
    for (const secret of secrets) expect(seen).not.toContain(secret)
  })

  it('sees only its own processes, as an unprivileged user', async () => {
    const session = await createSession(ACME_KEY)
    const output = await runInTurn(
      ACME_KEY,
      session,
      `echo "uid=$(id -u)"; echo "procs=$(ls /proc | grep -cE '^[0-9]+$')"; kill -0 ${server.child.pid}; echo "signal=$?"; cat /proc/*/cmdline | tr '\\0' ' '`,
    )
    expect(output).toContain(`uid=${await sandboxUid()}`)
    expect(output).not.toContain('uid=0\n')
    expect(Number(/procs=(\d+)/.exec(output)?.[1])).toBeLessThanOrEqual(5)
    expect(output).toMatch(/signal=1/)
    expect(output).not.toMatch(/node|tsx|functions\/node\.ts/)
  })

  it('command hooks run in the same sandbox', async () => {
    const globex = await createSession(GLOBEX_KEY)
    await runInTurn(GLOBEX_KEY, globex, 'echo globex-hook-private > hook-secret.txt')
    const theirs = join(workspaces, 'globex', globex, 'hook-secret.txt')
    const hook = [
      'id -u > hook-uid.txt',
      "tr '\\0' '\\n' < /proc/$PPID/environ > hook-env.txt",
      "ls /proc | grep -cE '^[0-9]+$' > hook-procs.txt",
      `cat ${theirs} > hook-theirs.txt 2>&1`,
    ].join('; ')
    const session = await createSession(ACME_KEY, {
      hooks: [{ event: 'stop', type: 'command', command: hook }],
    })
    mock.enqueue({ text: 'nothing to do' })
    const turn = await api(ACME_KEY, `/v1/sessions/${session}/turns`, { input: 'hello' })
    expect(turn.status, JSON.stringify(turn)).toBe('completed')
    const mine = (name: string) => readFile(join(workspaces, 'acme', session, name), 'utf8')
    expect(Number(await mine('hook-uid.txt'))).toBe(await sandboxUid())
    const env = await mine('hook-env.txt')
    for (const secret of secrets) expect(env).not.toContain(secret)
    expect(Number(await mine('hook-procs.txt'))).toBeLessThanOrEqual(5)
    expect(await mine('hook-theirs.txt')).not.toContain('globex-hook-private')
  })
})

describe('starting without a working sandbox', () => {
  let hidden: string
  beforeAll(async () => {
    if (process.getuid?.() !== 0) {
      throw new Error('run as root: only a runner running as root drops to another user')
    }
    // A data dir the sandbox user cannot get to (a private parent): bubblewrap cannot bind it.
    hidden = join(dataDir, 'private')
    await mkdir(hidden, { recursive: true })
    await chmod(hidden, 0o700)
  })

  it('multi-tenant mode refuses to start the embedded runner, saying why and what to do', async () => {
    const started = startNodeEntry({
      PORT: '0',
      TURNLINE_DATA_DIR: join(hidden, 'multi'),
      TURNLINE_API_KEYS: `${ACME_KEY}=acme`,
    })
    expect(await started.exited).toBe(1)
    const said = started.output()
    expect(said).toMatch(/refusing to start the embedded runner: no working command sandbox/)
    expect(said).toMatch(/must be able to reach/)
    expect(said).toMatch(/TURNLINE_RUNNER_URL/)
    expect(said).not.toMatch(/listening/)
  })

  it('single-tenant mode runs unsandboxed, and says so loudly', async () => {
    const started = startNodeEntry({ PORT: '0', TURNLINE_DATA_DIR: join(hidden, 'single') })
    try {
      await started.listening()
      expect(started.output()).toMatch(/WARNING: commands run UNSANDBOXED/)
    } finally {
      await started.stop()
    }
  })

  it('TURNLINE_SANDBOX=off is a configuration error in multi-tenant mode', async () => {
    const started = startNodeEntry({
      PORT: '0',
      TURNLINE_DATA_DIR: join(dataDir, 'off'),
      TURNLINE_API_KEYS: `${ACME_KEY}=acme`,
      TURNLINE_SANDBOX: 'off',
    })
    expect(await started.exited).toBe(1)
    expect(started.output()).toMatch(/TURNLINE_SANDBOX: off is refused with TURNLINE_API_KEYS/)
  })
})
