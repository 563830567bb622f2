import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = new URL('../../', import.meta.url).pathname

interface Metafile {
  outputs: Record<
    string,
    { imports: { path: string }[]; inputs: Record<string, { bytesInOutput: number }> }
  >
}

/** The Worker as `wrangler deploy` bundles it (wrangler.toml, alias, minify), without deploying. */
describe('Worker bundle', () => {
  let dir = ''
  let inputs: string[] = []
  let externals: string[] = []
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
    const meta = JSON.parse(await readFile(join(dir, 'bundle-meta.json'), 'utf8')) as Metafile
    const worker = Object.entries(meta.outputs).find(([name]) => name.endsWith('worker.js'))?.[1]
    if (!worker) throw new Error(`no worker.js among ${Object.keys(meta.outputs).join(', ')}`)
    inputs = Object.keys(worker.inputs)
    for (const [path, input] of Object.entries(worker.inputs)) {
      if (path.includes('@anthropic-ai/sdk/')) anthropicBytes += input.bytesInOutput
    }
    externals = worker.imports.map((i) => i.path)
  })
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('is self-contained: no node: modules but AsyncLocalStorage, no filesystem adapter', () => {
    // Its only imports: the two rank tables, uploaded beside it as Text modules, and
    // node:async_hooks, which the nodejs_als compatibility flag provides (nothing else of Node).
    expect(externals.map((path) => path.replace(/^\.\/[0-9a-f]{40}-/, ''))).toEqual(
      expect.arrayContaining(['o200k_base', 'cl100k_base', 'node:async_hooks']),
    )
    expect(externals).toHaveLength(3)
    expect(inputs.filter((path) => path.startsWith('adapters/fs/'))).toEqual([])
    expect(inputs).toContain('functions/entries/worker.ts')
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

  it('counts with gpt-tokenizer, its rank tables text beside the bundle, not compiled in it', () => {
    expect(inputs).toContain('node_modules/gpt-tokenizer/esm/GptEncoding.js')
    expect(inputs).toContain('functions/entries/worker-encoding-o200k.ts')
    expect(inputs).toContain('functions/entries/worker-encoding-cl100k.ts')
    expect(inputs.filter((path) => path.includes('/bpeRanks/'))).toEqual([])
    expect(inputs.filter((path) => path.includes('gpt-tokenizer/esm/encoding/'))).toEqual([])
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
