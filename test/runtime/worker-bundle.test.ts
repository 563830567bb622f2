import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = new URL('../../', import.meta.url).pathname

interface Metafile {
  outputs: Record<
    string,
    {
      imports: { path: string; kind: string; external?: boolean }[]
      exports: string[]
      inputs: Record<string, { bytesInOutput: number }>
    }
  >
}

/**
 * The Worker as `wrangler deploy` uploads it (wrangler.toml: its build command, which bundles
 * functions/entries/worker.ts into dist/worker/ with the modules loaded on demand beside it, and
 * wrangler's own pass over worker.js), without deploying.
 */
describe('Worker bundle', () => {
  let dir = ''
  let uploaded: string[] = []
  let outputs: Metafile['outputs'] = {}
  /** Every input of every module, and of those compiled at every start (worker.js and its static imports). */
  let inputs: string[] = []
  let atStart: string[] = []
  let anthropicBytes = 0
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'turnline-bundle-'))
    await promisify(execFile)(
      join(root, 'node_modules/.bin/wrangler'),
      ['deploy', '--dry-run', '--outdir', dir, '--metafile'],
      {
        cwd: root,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          WRANGLER_SEND_METRICS: 'false',
          CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        },
      },
    )
    uploaded = (await readdir(dir, { recursive: true })).filter(
      (name) => !/\.(map|md|json)$/.test(name),
    )
    const meta = JSON.parse(await readFile(join(root, 'dist/worker-meta.json'), 'utf8')) as Metafile
    outputs = meta.outputs
    const started = staticClosure('dist/worker/worker.js')
    for (const [name, output] of Object.entries(outputs)) {
      if (!name.endsWith('.js')) continue
      inputs.push(...Object.keys(output.inputs))
      if (started.has(name)) atStart.push(...Object.keys(output.inputs))
      for (const [path, input] of Object.entries(output.inputs)) {
        if (path.includes('@anthropic-ai/sdk/')) anthropicBytes += input.bytesInOutput
      }
    }
    inputs = [...new Set(inputs)]
    atStart = [...new Set(atStart)]
  })
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  function staticClosure(from: string, seen = new Set<string>()): Set<string> {
    seen.add(from)
    for (const i of outputs[from]?.imports ?? []) {
      if (i.kind === 'import-statement' && !i.external && !seen.has(i.path))
        staticClosure(i.path, seen)
    }
    return seen
  }

  it('uploads worker.js and every module it and its chunks import, the rank tables as data', () => {
    expect(uploaded).toContain('worker.js')
    const imported = new Set<string>()
    for (const [name, output] of Object.entries(outputs)) {
      if (!name.endsWith('.js')) continue
      imported.add(name.replace('dist/worker/', ''))
      for (const i of output.imports) {
        if (!i.external) imported.add(i.path.replace('dist/worker/', ''))
        else if (i.path.startsWith('./')) imported.add(i.path.slice(2))
        // Only node:async_hooks is left to the runtime (the nodejs_als compatibility flag).
        else expect(i.path).toBe('node:async_hooks')
      }
    }
    expect([...imported].filter((name) => !uploaded.includes(name))).toEqual([])
    expect(uploaded).toEqual(
      expect.arrayContaining([
        'modules/rank-tables/o200k_base.bin',
        'modules/rank-tables/cl100k_base.bin',
      ]),
    )
    expect(inputs.filter((path) => path.startsWith('adapters/fs/'))).toEqual([])
    expect(atStart).toContain('functions/entries/worker.ts')
  })

  it('compiles at start none of what only configured deployments use', () => {
    const late = [
      '@anthropic-ai/sdk/',
      '@modelcontextprotocol/sdk/',
      '@opentelemetry/sdk-trace',
      '@smithy/',
      'adapters/s3/',
      'gpt-tokenizer/',
      // The OpenAI SDK's client: only Responses requests and compaction make it.
      'node_modules/openai/client.mjs',
      'node_modules/openai/resources/',
    ]
    for (const part of late) {
      expect(inputs.filter((path) => path.includes(part))).not.toEqual([])
      expect(atStart.filter((path) => path.includes(part))).toEqual([])
    }
  })

  it('loads no CommonJS package on demand (its module would export only `default`)', () => {
    // The stand-in for gpt-tokenizer's rank modules is ES and exports `default` as they do.
    const standIn = 'functions/entries/worker-packaged-ranks.ts'
    const onDemand = Object.values(outputs).flatMap((output) =>
      output.imports
        .filter((i) => i.kind === 'dynamic-import' && !i.external)
        .map((i) => i.path)
        .filter((path) => !Object.keys(outputs[path]?.inputs ?? {}).includes(standIn)),
    )
    expect(onDemand).not.toEqual([])
    for (const path of onDemand)
      expect([path, outputs[path]?.exports]).not.toEqual([path, ['default']])
  })

  it('has the OpenTelemetry SDK with the Web (fetch) builds of the OTLP exporters, not Node http', () => {
    for (const encoding of ['http', 'proto']) {
      expect(inputs).toContain(
        `node_modules/@opentelemetry/exporter-trace-otlp-${encoding}/build/esm/platform/browser/OTLPTraceExporter.js`,
      )
    }
    expect(inputs.filter((path) => path.includes('@opentelemetry/sdk-trace/'))).not.toEqual([])
    expect(inputs.filter((path) => /otel.*node-http|platform\/node\//.test(path))).toEqual([])
    // The tests' protobuf decoder (a second otlp-transformer) and protobufjs stay out.
    expect(inputs.filter((path) => /otlp-transformer-0216|protobufjs/.test(path))).toEqual([])
  })

  it("counts with the rank tables beside the bundle, none of gpt-tokenizer's encodings in it", () => {
    expect(inputs).toContain('functions/entries/worker-rank-tables.ts')
    expect(inputs).toContain('src/core/compaction/bpe-counter.ts')
    expect(inputs.filter((path) => path.includes('/bpeRanks/'))).toEqual([])
    expect(inputs.filter((path) => path.includes('gpt-tokenizer/esm/encoding/'))).toEqual([])
    expect(inputs.filter((path) => path.includes('gpt-tokenizer/esm/GptEncoding'))).toEqual([])
  })

  it('has the MCP SDK client but not Ajv (the client validates with @cfworker/json-schema)', () => {
    expect(
      inputs.filter((path) => path.includes('@modelcontextprotocol/sdk/dist/esm/client/')),
    ).not.toEqual([])
    expect(inputs.filter((path) => /node_modules\/(ajv|ajv-formats)\//.test(path))).toEqual([])
    expect(inputs).toContain('functions/entries/worker-ajv.ts')
  })

  it('leaves out the schema converters of hono-openapi (ours is zod.toJSONSchema)', () => {
    expect(inputs.filter((path) => path.includes('@standard-community/'))).toEqual([])
    expect(inputs.filter((path) => /node_modules\/zod\/v3\//.test(path))).toEqual([])
  })

  it('has the Anthropic SDK base client and its Messages resource, not the whole API', () => {
    expect(inputs).toContainEqual(expect.stringMatching(/sdk\/resources\/messages\/messages\.mjs$/))
    // The full `Anthropic` client (every resource: beta, files, models, …) is ≈380 KB minified.
    expect(anthropicBytes).toBeGreaterThan(0)
    expect(anthropicBytes).toBeLessThan(160_000)
  })

  it('has no AWS SDK: the S3 adapter signs and sends its own requests', () => {
    expect(inputs.filter((path) => path.includes('node_modules/@aws-sdk/'))).toEqual([])
    expect(inputs).toContainEqual(expect.stringMatching(/adapters\/s3\/s3-rest\.ts$/))
  })
})
