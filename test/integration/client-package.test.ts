import { spawn } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppInstance } from '../support/app-instance.ts'
import { collect, repoRoot } from '../support/cli-process.ts'
import type { MockOpenAI } from '../support/mock-openai.ts'
import { startTestDeployment, type TestDeployment } from '../support/test-deployment.ts'

/**
 * The client as the package ships it: `npm run build`'s client target, installed as
 * `node_modules/turnline` (package.json `exports["./client"]`), type-checked from a strict
 * NodeNext consumer and run from plain JavaScript against a real server.
 */
let dir = ''
let deployment: TestDeployment
let mock: MockOpenAI
let app: AppInstance

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnline-client-package-'))
  const pkg = join(dir, 'node_modules/turnline')
  await mkdir(pkg, { recursive: true })
  const build = await collect(
    spawn(process.execPath, ['infra/build/build.mjs', 'client', '--out', join(pkg, 'dist')], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  )
  expect(build.code, build.stderr).toBe(0)
  await cp(join(repoRoot, 'package.json'), join(pkg, 'package.json'))
  await symlink(join(repoRoot, 'node_modules/zod'), join(dir, 'node_modules/zod'), 'dir')
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n')

  deployment = await startTestDeployment('clientpkg', { TURNLINE_LOG: 'off' })
  ;({ mock, app } = deployment)
}, 180_000)
afterAll(async () => {
  await deployment?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

const CONSUMER_TS = `
import { TurnlineApiError, TurnlineClient, type SeqEvent } from 'turnline/client'

export async function run(baseUrl: string): Promise<string[]> {
  const client = new TurnlineClient({ baseUrl, apiKey: 'key' })
  const { session_id } = await client.createSession({ workspace: 'w', limits: { max_turns: 3 } })
  const texts: string[] = []
  const seen: SeqEvent[] = []
  for await (const item of client.streamTurn(session_id, { input: 'hi' })) {
    seen.push(item)
    const { event } = item
    if (event.type === 'item.completed' && event.item.type === 'agent_message') {
      texts.push(event.item.text)
    }
  }
  // @ts-expect-error a field the route does not take is a type error
  await client.stepTurn(session_id, { inputs: 'x' })
  try {
    await client.getSession('missing')
  } catch (error) {
    if (error instanceof TurnlineApiError) texts.push(\`\${error.status} \${error.code}\`)
  }
  return texts
}
`

const CONSUMER_MJS = `
import { TurnlineApiError, TurnlineClient } from 'turnline/client'

const client = new TurnlineClient({ baseUrl: process.argv[2] })
const { session_id } = await client.createSession()
const turn = client.streamTurn(session_id, { input: 'Say hello' })
const seqs = []
for await (const item of turn) seqs.push(item.seq)
const result = await turn.result()
const error = await client.getSession('missing').catch((e) => e)
console.log(JSON.stringify({ seqs, status: result.status, api: error instanceof TurnlineApiError, code: error.code }))
`

describe('the packaged client (turnline/client)', { timeout: 180_000 }, () => {
  it('type-checks a strict NodeNext consumer against the shipped declarations', async () => {
    const file = join(dir, 'consumer.ts')
    await writeFile(file, CONSUMER_TS)
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: [],
      strict: true,
      noEmit: true,
      skipLibCheck: false,
    })
    const problems = ts
      .getPreEmitDiagnostics(program)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    expect(problems).toEqual([])
    // The types came from the package, not from the repository's sources.
    const shipped = program.getSourceFiles().map((f) => f.fileName)
    expect(shipped.some((f) => f.includes('node_modules/turnline/dist/client/types/'))).toBe(true)
  })

  it('runs from plain JavaScript against a real server', async () => {
    await writeFile(join(dir, 'consumer.mjs'), CONSUMER_MJS)
    mock.enqueue({ text: 'Hello from the packaged client.' })
    const run = await collect(
      spawn(process.execPath, ['consumer.mjs', app.url], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toEqual({
      seqs: [1, 2, 3, 4],
      status: 'completed',
      api: true,
      code: 'not_found',
    })
    mock.assertDone()
  })

  it("runs the README's client sample as written", async () => {
    const readme = await readFile(join(repoRoot, 'README.md'), 'utf8')
    const at = readme.indexOf('From TypeScript, the typed client')
    expect(at, 'the README has its client section').toBeGreaterThan(0)
    const block = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))?.[1]
    if (!block) throw new Error('no ts block in the README client section')
    expect(block).toContain("'http://127.0.0.1:8787'")
    const code = ts.transpileModule(
      block.replace("'http://127.0.0.1:8787'", JSON.stringify(app.url)),
      {
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
      },
    ).outputText
    await writeFile(join(dir, 'readme-sample.mjs'), code)
    mock.enqueue({ text: 'hello' })
    const run = await collect(
      spawn(process.execPath, ['readme-sample.mjs'], {
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout.split('\n')).toEqual([
      '1 turn.started',
      '2 item.started',
      '3 item.completed',
      '4 turn.completed',
      'completed',
      '0 thread.started',
      '1 turn.started',
      '2 item.started',
      '3 item.completed',
      '4 turn.completed',
      '5 thread.completed',
      '',
    ])
    mock.assertDone()
  })
})
