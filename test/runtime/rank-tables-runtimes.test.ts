import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { promisify } from 'node:util'
import { build } from 'esbuild'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { compatibility, workerdBin, workerdConfig } from '../../bench/support/workerd-bundle.ts'
import { writeWorkerRankTables } from '../../infra/build/worker-rank-tables.mjs'
import { countInPieces } from '../../src/core/compaction/counting-pieces.ts'
import type { EncodingName } from '../../src/ports/tokenizer.ts'
import { freePort, type RuntimeProcess, startRuntime } from '../support/runtime-process.ts'
import { tokenCorpus } from '../support/token-corpus.ts'

const root = new URL('../../', import.meta.url).pathname
const ENCODINGS: EncodingName[] = ['o200k_base', 'cl100k_base']
const library = {
  o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
  cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
}
// Every 4th sample of the corpus and a long text counted in bounded pieces.
const texts = [
  ...tokenCorpus().filter((_, i) => i % 4 === 0),
  tokenCorpus(28).join('\n').slice(0, 60_000),
]

async function expected(encoding: EncodingName): Promise<number[]> {
  const theirs = await library[encoding]()
  const plain = { disallowedSpecial: new Set<string>() }
  return texts.map((text) =>
    text.length === 0 ? 0 : countInPieces(text, (piece) => theirs.countTokens(piece, plain)),
  )
}

/** The token counter on the other runtimes, with their own rank-table sources, against Node's gpt-tokenizer. */
describe('token counts on workerd and Deno', () => {
  let dir = ''
  let worker: RuntimeProcess | undefined
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'turnline-counts-'))
    await writeFile(join(dir, 'texts.json'), JSON.stringify(texts))
  })
  afterAll(async () => {
    await worker?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('counts on workerd from the uploaded rank tables (Data modules), as gpt-tokenizer does', async () => {
    const moduleFile = join(dir, 'worker.js')
    await build({
      entryPoints: [join(root, 'test/support/count-worker.ts')],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      outfile: moduleFile,
      logLevel: 'warning',
      plugins: [workerImports],
    })
    const port = await freePort()
    const config = await workerdConfig({
      dir,
      moduleFile,
      modules: [
        { name: 'o200k_base.bin', type: 'data' },
        { name: 'cl100k_base.bin', type: 'data' },
      ],
      compatibility: await compatibility(),
      port,
      vars: {},
    })
    // The tables as wrangler's [build] command writes them for the upload (no hash tables).
    writeWorkerRankTables(dir)
    worker = await startRuntime({
      name: 'workerd',
      command: workerdBin,
      args: ['serve', config],
      env: { PATH: process.env.PATH ?? '' },
      cwd: dir,
      port,
      readyTimeoutMs: 30_000,
    })
    for (const encoding of ENCODINGS) {
      const answer = await fetch(`${worker.url}/count`, {
        method: 'POST',
        body: JSON.stringify({ encoding, texts }),
      })
      expect(answer.status, worker.output()).toBe(200)
      expect(await answer.json()).toEqual(await expected(encoding))
    }
  }, 120_000)

  it('counts on Deno from the committed rank tables, as gpt-tokenizer does', async () => {
    for (const encoding of ENCODINGS) {
      const { stdout } = await promisify(execFile)(
        join(root, 'node_modules/.bin/deno'),
        [
          'run',
          '--quiet',
          '--allow-read',
          '--config',
          join(root, 'deno.json'),
          join(root, 'test/support/count-deno.ts'),
          encoding,
          join(dir, 'texts.json'),
        ],
        { cwd: root, maxBuffer: 16 * 1024 * 1024 },
      )
      expect(JSON.parse(stdout)).toEqual(await expected(encoding))
    }
  }, 120_000)
})

/** As wrangler.toml has it: `*.bin` as Data modules beside the bundle, no package rank literals. */
const workerImports = {
  name: 'worker-imports',
  setup(build: import('esbuild').PluginBuild) {
    build.onResolve({ filter: /\.bin$/ }, ({ path }) => ({
      path: `./${basename(path)}`,
      external: true,
    }))
    build.onResolve({ filter: /^gpt-tokenizer\/esm\/bpeRanks\// }, () => ({
      path: join(root, 'functions/entries/worker-packaged-ranks.ts'),
    }))
  },
}
