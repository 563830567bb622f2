import { createHmac } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEMO_MODEL_NAME } from '../../adapters/demo-model/demo-model-client.ts'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { MemoryTenantLimiter } from '../../adapters/memory/memory-tenant-limiter.ts'
import { unconfiguredModelClient } from '../../adapters/openai/openai-model-client.ts'
import { S3ObjectStore } from '../../adapters/s3/s3-object-store.ts'
import { UpstashCoordinator } from '../../adapters/upstash/upstash-coordinator.ts'
import { createDeps, type DepsOptions } from '../../functions/deps.ts'
import { ConfigError } from '../../functions/env-config.ts'
import { jsonLines } from '../../functions/http/request-log.ts'
import { DurableIntentsCoordinator } from '../../src/store/durable-intents-coordinator.ts'

const KEYS = 'aaaaaaaaaaaaaaaaaaaa=t1,bbbbbbbbbbbbbbbbbbbb=t2'
const fsDefault = { defaultStore: (root: string) => new FsObjectStore({ root }) }

async function problems(
  env: Record<string, string>,
  options: DepsOptions = fsDefault,
): Promise<string> {
  const error = await createDeps(env, options).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(ConfigError)
  return (error as ConfigError).message
}

describe('createDeps', () => {
  it('runs embedded with zero configuration: fs store, memory coordinator, the demo model', async () => {
    const deps = await createDeps({}, fsDefault)
    const store = deps.service.sessions.objects
    expect(store).toBeInstanceOf(FsObjectStore)
    expect((store as FsObjectStore).root).toBe(join(process.cwd(), '.turnline'))
    // in this process, with pending intents kept in the session store
    const coordinator = deps.service.coordinator
    expect(coordinator).toBeInstanceOf(DurableIntentsCoordinator)
    expect((coordinator as DurableIntentsCoordinator).inner).toBeInstanceOf(MemoryCoordinator)
    expect(deps.service.models('local')).not.toBe(unconfiguredModelClient)
    expect(deps.model).toMatchObject({ provider: 'demo', defaultModel: DEMO_MODEL_NAME })
    expect(deps.auth.keys).toEqual([])
    expect(deps.server).toEqual({ port: 8787, host: '127.0.0.1' })
    expect(deps.service.tools.allowedHosts).toEqual(['127.0.0.1', 'localhost', '[::1]'])
    expect(deps.service.defaults).toEqual({
      model: DEMO_MODEL_NAME,
      modelApi: 'chat',
      leaseMs: 60_000,
      idempotencyTtlSeconds: 86_400,
      invocationBudgetMs: 25_000,
      quotaWait: { retryMaxMs: 300_000, maxAgeMs: 172_800_000 },
      tenantCaps: { scheduledLoops: 100, pendingWork: 1000 },
    })
    expect(deps.http).toEqual({
      limits: { maxBytes: 1024 * 1024 },
      follow: { maxMs: 300_000, pollMs: 1000 },
      maxFollowedStreams: 64,
      replayGuard: { claim: expect.any(Function) },
      webhookReplayGuard: { claim: expect.any(Function), recorded: expect.any(Function) },
      webhookIdRetentionSeconds: 4 * 86_400,
      requestLog: jsonLines,
      // No limits, usage counted in this process only (no extra coordinator calls).
      tenancy: expect.objectContaining({ defaults: {}, limiter: expect.any(MemoryTenantLimiter) }),
      // Unauthenticated: only requests addressed to loopback names.
      allowedHosts: [],
      corsOrigins: [],
    })
    expect(deps.notices.join('\n')).toMatch(/TURNLINE_TOOL_SECRET is not set/)
    expect(deps.notices.join('\n')).toMatch(/OFFLINE DEMO MODEL/)
    expect(deps.service.tools.secretFor('local')).toMatch(/^[0-9a-f]{64}$/)
  })

  it('picks the model: a real one with an endpoint, the demo model only where it is not silent', async () => {
    const real = await createDeps(
      { OPENAI_API_KEY: 'sk-test', TURNLINE_MODEL: 'gpt-4o-mini' },
      fsDefault,
    )
    expect(real.model).toMatchObject({
      provider: 'openai',
      defaultModel: 'gpt-4o-mini',
      baseURL: 'https://api.openai.com/v1',
    })
    expect(real.notices.join('\n')).toMatch(
      /model: gpt-4o-mini via https:\/\/api\.openai\.com\/v1 \(Chat Completions API, API key set\)/,
    )
    const keyless = await createDeps({ OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, fsDefault)
    expect(keyless.model).toMatchObject({
      provider: 'openai',
      baseURL: 'http://127.0.0.1:11434/v1',
    })
    expect(keyless.model.defaultModel).toBeUndefined()
    // Multi-tenant without an endpoint: turns fail, the demo model is never chosen silently.
    const multi = await createDeps({ TURNLINE_API_KEYS: KEYS }, fsDefault)
    expect(multi.model.provider).toBe('none')
    expect(multi.service.models('t1')).toBe(unconfiguredModelClient)
    expect(multi.service.defaults.model).toBeUndefined()
    expect(multi.notices.join('\n')).toMatch(/TURNLINE_MODEL_PROVIDER=demo/)
    // Asked for explicitly, it serves every tenant, and the OpenAI variables are ignored aloud.
    const asked = await createDeps(
      { TURNLINE_API_KEYS: KEYS, TURNLINE_MODEL_PROVIDER: 'demo', OPENAI_API_KEY: 'sk-test' },
      fsDefault,
    )
    expect(asked.model.provider).toBe('demo')
    expect(asked.notices.join('\n')).toMatch(/ignoring the OPENAI_\* variables/)
    const none = await createDeps({ TURNLINE_MODEL_PROVIDER: 'openai' }, fsDefault)
    expect(none.model.provider).toBe('none')
  })

  it('switches the request log off with TURNLINE_LOG=off', async () => {
    const deps = await createDeps({ TURNLINE_LOG: 'off' }, fsDefault)
    expect(deps.http.requestLog).toBeUndefined()
    expect(await problems({ TURNLINE_LOG: 'verbose' })).toMatch(/TURNLINE_LOG/)
  })

  it('treats empty values as unset', async () => {
    const deps = await createDeps({ S3_BUCKET: '', PORT: ' ', TURNLINE_API_KEYS: '' }, fsDefault)
    expect(deps.service.sessions.objects).toBeInstanceOf(FsObjectStore)
    expect(deps.server.port).toBe(8787)
  })

  it('uses TURNLINE_DATA_DIR for the embedded store', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'turnline-deps-'))
    try {
      const deps = await createDeps({ TURNLINE_DATA_DIR: dir }, fsDefault)
      expect((deps.service.sessions.objects as FsObjectStore).root).toBe(dir)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('needs S3 (or an explicit memory store) where no filesystem default exists', async () => {
    expect(await problems({}, {} as typeof fsDefault)).toMatch(/S3_BUCKET/)
    const deps = await createDeps({ TURNLINE_STORE: 'memory' })
    expect(deps.service.sessions.objects).toBeInstanceOf(MemoryObjectStore)
  })

  it('builds the S3 store, the Upstash coordinator and the OpenAI client from their variables', async () => {
    const deps = await createDeps(
      {
        S3_BUCKET: 'my-bucket',
        S3_REGION: 'eu-west-1',
        S3_ENDPOINT: 'http://127.0.0.1:9000',
        S3_FORCE_PATH_STYLE: 'true',
        S3_ACCESS_KEY_ID: 'id',
        S3_SECRET_ACCESS_KEY: 'secret',
        S3_PREFIX: 'turnline/prod',
        UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:8079',
        UPSTASH_REDIS_REST_TOKEN: 'token',
        OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1',
        TURNLINE_MODEL: 'llama3',
        TURNLINE_MODEL_API: 'responses',
        TURNLINE_API_KEYS: KEYS,
        HOST: '0.0.0.0',
        PORT: '9000',
      },
      fsDefault,
    )
    const store = deps.service.sessions.objects as S3ObjectStore
    expect(store).toBeInstanceOf(S3ObjectStore)
    expect(store.bucket).toBe('my-bucket')
    expect(store.client.region).toBe('eu-west-1')
    expect(store.client.pathStyle).toBe(true)
    expect(deps.service.coordinator).toBeInstanceOf(UpstashCoordinator)
    expect(deps.service.models('t1')).not.toBe(unconfiguredModelClient)
    expect(deps.service.defaults).toMatchObject({ model: 'llama3', modelApi: 'responses' })
    expect(deps.server).toEqual({ port: 9000, host: '0.0.0.0' })
    expect(deps.auth.keys.map((k) => k.tenant)).toEqual(['t1', 't2'])
    expect(deps.service.tools.allowedHosts).toEqual([])
    // No TURNLINE_REDIS_NAMESPACE: the keys of every earlier release, claimed for this store.
    expect(deps.redisClaim).toEqual({
      namespace: 'turnline:',
      store: 's3://my-bucket/turnline/prod',
    })
  })

  it('refuses S3 without a shared coordinator on Deno Deploy, and allows it in one deno serve', async () => {
    const s3 = {
      S3_BUCKET: 'my-bucket',
      S3_ENDPOINT: 'http://127.0.0.1:9000',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      TURNLINE_API_KEYS: KEYS,
    }
    // Deno Deploy's isolates would each keep their own leases and idempotency records.
    expect(await problems({ ...s3, DENO_DEPLOYMENT_ID: 'k3x9v2' })).toMatch(
      /UPSTASH_REDIS_REST_URL and UPSTASH_REDIS_REST_TOKEN: required with S3_BUCKET on Deno Deploy \(DENO_DEPLOYMENT_ID is set\); it serves from many isolates at once/,
    )
    const deployed = await createDeps(
      {
        ...s3,
        DENO_DEPLOYMENT_ID: 'k3x9v2',
        UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:8079',
        UPSTASH_REDIS_REST_TOKEN: 'token',
      },
      fsDefault,
    )
    expect(deployed.service.coordinator).toBeInstanceOf(UpstashCoordinator)
    // One `deno serve` process (no DENO_DEPLOYMENT_ID): the in-process coordinator is right.
    const local = await createDeps(s3, fsDefault)
    expect(local.service.coordinator).toBeInstanceOf(DurableIntentsCoordinator)
  })

  it('uses REDIS_URL through the entry-provided TCP coordinator, and refuses it without one', async () => {
    const made: string[] = []
    const deps = await createDeps(
      { REDIS_URL: 'redis://:pw@10.0.0.5:6380/2', TURNLINE_REDIS_NAMESPACE: 'staging.eu-1' },
      {
        ...fsDefault,
        redisCoordinator: (url, keyspace) => {
          made.push(url, keyspace.namespace)
          return new MemoryCoordinator()
        },
      },
    )
    expect(made).toEqual(['redis://:pw@10.0.0.5:6380/2', 'turnline:ns:staging.eu-1:'])
    expect(await problems({ TURNLINE_REDIS_NAMESPACE: 'a:b' })).toMatch(
      /TURNLINE_REDIS_NAMESPACE: use 1–64 characters/,
    )
    const notices = deps.notices.join('\n')
    expect(notices).toMatch(/coordination in Redis at redis:\/\/10\.0\.0\.5:6380 \(TCP\)/)
    expect(notices).not.toMatch(/pw/)
    expect(await problems({ REDIS_URL: 'redis://127.0.0.1:6379' })).toMatch(
      /REDIS_URL: this runtime has no TCP Redis client/,
    )
  })

  it('derives each tenant secret as hex HMAC-SHA256(TURNLINE_TOOL_SECRET, tenant)', async () => {
    const master = 'a-deployment-secret-of-some-length'
    const deps = await createDeps(
      {
        TURNLINE_TOOL_SECRET: master,
        TURNLINE_API_KEYS: KEYS,
        TURNLINE_TOOL_ALLOWED_HOSTS: 'Tools.Example.com, 127.0.0.1:9999',
      },
      fsDefault,
    )
    for (const tenant of ['t1', 't2']) {
      const expected = createHmac('sha256', master).update(tenant).digest('hex')
      expect(deps.service.tools.secretFor(tenant)).toBe(expected)
    }
    expect(deps.service.tools.secretFor('t1')).not.toBe(deps.service.tools.secretFor('t2'))
    expect(() => deps.service.tools.secretFor('t3')).toThrow(/no tool signing secret/)
    expect(deps.service.tools.allowedHosts).toEqual(['tools.example.com', '127.0.0.1:9999'])
    expect(deps.notices.join('\n')).not.toMatch(/TURNLINE_TOOL_SECRET/)
  })

  it('refuses a non-loopback HOST in single-tenant mode', async () => {
    expect(await problems({ HOST: '0.0.0.0' })).toMatch(/HOST: 0\.0\.0\.0 is not a loopback/)
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', '::1']) {
      expect((await createDeps({ HOST: host }, fsDefault)).server.host).toBe(host)
    }
  })

  it('a runtime reachable from anywhere needs keys, or TURNLINE_SINGLE_TENANT asked for explicitly', async () => {
    const worker = { memoryStoreByDefault: true, reachableFromAnywhere: true }
    expect(await problems({}, worker)).toMatch(
      /TURNLINE_API_KEYS: not set[\s\S]*TURNLINE_SINGLE_TENANT=1/,
    )
    expect((await createDeps({ TURNLINE_API_KEYS: KEYS }, worker)).auth.keys).toHaveLength(2)
    const registry = await createDeps({ TURNLINE_KEY_REGISTRY: '1' }, worker)
    expect(registry.auth.registry).toBeDefined()
    const local = await createDeps({ TURNLINE_SINGLE_TENANT: '1' }, worker)
    expect(local.auth).toEqual({ keys: [] })
    // Both at once is a contradiction, on every runtime.
    expect(local.http.allowedHosts).toEqual([])
    expect(
      (await createDeps({ TURNLINE_ALLOWED_HOSTS: 'Dev.Test, box.lan:8787' }, fsDefault)).http
        .allowedHosts,
    ).toEqual(['dev.test', 'box.lan:8787'])
    expect(await problems({ TURNLINE_SINGLE_TENANT: '1', TURNLINE_API_KEYS: KEYS })).toMatch(
      /TURNLINE_SINGLE_TENANT: set together with TURNLINE_API_KEYS/,
    )
  })

  it('names every bad variable', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PORT: 'http' }, /PORT: must be a whole number/],
      [{ PORT: '70000' }, /PORT/],
      [{ TURNLINE_MODEL_API: 'completions' }, /TURNLINE_MODEL_API/],
      [{ OPENAI_BASE_URL: 'localhost:11434' }, /OPENAI_BASE_URL: must be an http\(s\) URL/],
      [{ S3_BUCKET: 'No_Such Bucket' }, /S3_BUCKET: must be a valid S3 bucket name/],
      [{ TURNLINE_ALLOWED_HOSTS: 'http://dev.test' }, /TURNLINE_ALLOWED_HOSTS\.0: each entry/],
      [
        { TURNLINE_ALLOWED_HOSTS: 'dev.test', TURNLINE_API_KEYS: KEYS },
        /TURNLINE_ALLOWED_HOSTS: only an unauthenticated server/,
      ],
      [{ S3_REGION: 'eu-west-1' }, /S3_REGION: set S3_BUCKET too/],
      [{ S3_BUCKET: 'bucket', S3_ACCESS_KEY_ID: 'x' }, /S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/],
      [{ UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:1' }, /UPSTASH_REDIS_REST_TOKEN/],
      [{ TURNLINE_API_KEYS: 'short=t1' }, /TURNLINE_API_KEYS: entry 1/],
      [{ TURNLINE_TOOL_SECRET: 'short' }, /TURNLINE_TOOL_SECRET: must be at least 16/],
      [{ S3_FORCE_PATH_STYLE: 'maybe' }, /S3_FORCE_PATH_STYLE/],
      [{ TURNLINE_STORE: 's3' }, /TURNLINE_STORE: s3 needs S3_BUCKET/],
      [{ TURNLINE_FOLLOW_MAX_SECONDS: '0' }, /TURNLINE_FOLLOW_MAX_SECONDS/],
      [
        { TURNLINE_IO_BUDGET_MS: '60000' },
        /TURNLINE_IO_BUDGET_MS: 60000 must be less than TURNLINE_LEASE_MS/,
      ],
      [
        { TURNLINE_IO_BUDGET_MS: '2000', TURNLINE_STORAGE_TIMEOUT_MS: '3000' },
        /TURNLINE_STORAGE_TIMEOUT_MS: 3000 exceeds the call budget of 2000 ms/,
      ],
      [{ TURNLINE_LEASE_MS: '4000', TURNLINE_COORDINATOR_TIMEOUT_MS: '2500' }, /exceeds/],
      [{ TURNLINE_STORAGE_TIMEOUT_MS: '10' }, /TURNLINE_STORAGE_TIMEOUT_MS/],
      [{ TURNLINE_MCP_SERVERS: '{not json' }, /TURNLINE_MCP_SERVERS: must be a JSON array/],
      [{ TURNLINE_MCP_SERVERS: '[{"name":"a__b","url":"https://x/mcp"}]' }, /TURNLINE_MCP_SERVERS/],
      [{ REDIS_URL: 'http://127.0.0.1:6379' }, /REDIS_URL: must be a redis:\/\/ or rediss:\/\//],
      [
        {
          REDIS_URL: 'redis://127.0.0.1:6379',
          UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:1',
          UPSTASH_REDIS_REST_TOKEN: 't',
        },
        /REDIS_URL and UPSTASH_REDIS_REST_URL: choose one/,
      ],
    ]
    for (const [env, pattern] of cases)
      expect(await problems(env), JSON.stringify(env)).toMatch(pattern)
    const both = await problems({ PORT: 'x', TURNLINE_MODEL_API: 'y' })
    expect(both).toMatch(/PORT/)
    expect(both).toMatch(/TURNLINE_MODEL_API/)
  })

  it('gives S3 and Upstash calls deadlines: defaults, and scaled to a short lease', async () => {
    const base = {
      S3_BUCKET: 'bucket-a',
      S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 'secret',
      UPSTASH_REDIS_REST_URL: 'http://127.0.0.1:1',
      UPSTASH_REDIS_REST_TOKEN: 'token',
    }
    const deadlines = async (env: Record<string, string>) => {
      const deps = await createDeps({ ...base, ...env })
      const store = deps.service.sessions.objects
      const coordinator = deps.service.coordinator
      if (!(store instanceof S3ObjectStore) || !(coordinator instanceof UpstashCoordinator)) {
        throw new Error('expected S3 and Upstash')
      }
      return { store: store.deadline, coordinator: coordinator.deadline }
    }
    expect(await deadlines({})).toEqual({
      store: { attemptMs: 5_000, budgetMs: 15_000 },
      coordinator: { attemptMs: 3_000, budgetMs: 15_000 },
    })
    expect(await deadlines({ TURNLINE_LEASE_MS: '4000' })).toEqual({
      store: { attemptMs: 2_000, budgetMs: 2_000 },
      coordinator: { attemptMs: 2_000, budgetMs: 2_000 },
    })
    expect(
      await deadlines({ TURNLINE_STORAGE_TIMEOUT_MS: '800', TURNLINE_IO_BUDGET_MS: '5000' }),
    ).toEqual({
      store: { attemptMs: 800, budgetMs: 5_000 },
      coordinator: { attemptMs: 3_000, budgetMs: 5_000 },
    })
  })

  it('gives every session the MCP client and TURNLINE_MCP_SERVERS', async () => {
    const plain = await createDeps({}, fsDefault)
    expect(plain.service.mcp?.servers).toEqual([])
    expect(typeof plain.service.mcp?.client.connect).toBe('function')
    const servers =
      '[{"name":"docs","url":"https://mcp.internal/mcp","headers":{"authorization":"Bearer x"}}]'
    const deps = await createDeps({ TURNLINE_MCP_SERVERS: servers }, fsDefault)
    expect(deps.service.mcp?.servers).toEqual([
      { name: 'docs', url: 'https://mcp.internal/mcp', headers: { authorization: 'Bearer x' } },
    ])
  })

  it('never echoes secrets in configuration errors', async () => {
    const message = await problems({
      TURNLINE_API_KEYS: 'sk-very-secret-value-123=bad tenant',
      TURNLINE_TOOL_SECRET: 'tiny',
    })
    expect(message).not.toContain('sk-very-secret')
    expect(message).not.toContain('tiny')
  })
})
