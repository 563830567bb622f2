/**
 * What bench/cold-start-platforms.ts starts for `lambda`: a fresh `node` process started as the
 * AWS Lambda Node.js runtime starts a function (its bootstrap's V8 flags for a 1024 MB function,
 * the template's size; the Lambda environment; the bootstrap, bootstrap.ts, bundled into one
 * module) on the Runtime API of front.ts, handing it one of three bundles, each built into the
 * scratch folder as a deployment's zip would hold it:
 *
 *   Turnline     `node infra/build/build.mjs lambda` (dist/lambda/index.mjs and its chunks),
 *                configured as the deploy recipe does: sessions on S3 (moto), Upstash (the REST
 *                proxy in front of redis-server), the work queue on SQS (moto), API keys
 *   trivial      trivial.ts: the trivial Hono app behind `streamHandle`
 *   same work    same-work.ts: the same-work app behind `streamHandle`, its file in the
 *                start's folder (the function's /tmp)
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { MotoSqsQueue } from '../../../test/support/moto-sqs.ts'
import { requireServices } from '../../../test/support/services.ts'
import { createTestBucket } from '../../../test/support/test-bucket.ts'
import { startUpstashProxy } from '../../../test/support/upstash-proxy.ts'
import type { Target, TargetContext } from '../cold-start-targets.ts'
import { nodeBundle as bundle, type SameWorkTool } from '../same-work-targets.ts'
import { TENANT } from '../turn-cost-scenario.ts'

/** The function's memory (infra/deploy/lambda/template.yaml) and the runtime's heap flags for it. */
const MEMORY_MB = 1024
const NODE_FLAGS = [
  '--expose-gc',
  '--max-http-header-size',
  '81920',
  `--max-semi-space-size=${Math.floor(MEMORY_MB / 10 / 2)}`,
  `--max-old-space-size=${MEMORY_MB - Math.floor(MEMORY_MB / 10)}`,
]
const KEY = 'bench-lambda-key-0123456789'

export interface LambdaTargets {
  targets: Target[]
  /** Deletes the bucket and the queue, stops the Upstash proxy. */
  close(): Promise<void>
}

export async function lambdaTargets(
  ctx: TargetContext,
  runtimes: string[],
  tool: SameWorkTool,
): Promise<LambdaTargets> {
  if (!runtimes.includes('lambda')) return { targets: [], close: async () => {} }
  const scratch = (name: string) => join(ctx.scratch, name)
  const bootstrap = await bundle(
    ctx.here,
    'bench/support/lambda/bootstrap.ts',
    scratch('lambda-runtime/index.mjs'),
  )
  await bundle(ctx.here, 'bench/support/lambda/trivial.ts', scratch('lambda-trivial/index.mjs'))
  await bundle(ctx.here, 'bench/support/lambda/same-work.ts', scratch('lambda-same/index.mjs'))
  execFileSync(process.execPath, ['infra/build/build.mjs', 'lambda', '--out', scratch('built')], {
    cwd: ctx.here,
    stdio: 'ignore',
  })
  // The nodejs22.x runtime runs Node 22: run the bench on it (PATH), as the other targets.
  console.log(`lambda: node ${process.version}, ${MEMORY_MB} MB function (${NODE_FLAGS.join(' ')})`)
  const services = requireServices()
  const bucket = await createTestBucket(services.s3, 'coldstart')
  const proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
  const queue = await MotoSqsQueue.create(services.s3.endpoint, 'coldstart')

  const target = (
    name: string,
    kind: Target['kind'],
    root: string,
    env: (port: number, dir: string) => Record<string, string>,
  ): Target => ({
    name,
    runtime: 'lambda',
    kind,
    command: (port, dir) => {
      const { PATH, HOME } = ctx.env(port, dir)
      return {
        file: process.execPath,
        args: [...NODE_FLAGS, bootstrap],
        // What the runtime sets, then the function's own configuration.
        env: {
          PATH: PATH ?? '',
          HOME: HOME ?? '',
          LANG: 'en_US.UTF-8',
          TZ: ':UTC',
          AWS_LAMBDA_RUNTIME_API: `127.0.0.1:${port}`,
          _HANDLER: 'index.handler',
          LAMBDA_TASK_ROOT: root,
          LAMBDA_RUNTIME_DIR: scratch('lambda-runtime'),
          AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
          AWS_LAMBDA_FUNCTION_NAME: 'turnline',
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(MEMORY_MB),
          AWS_REGION: services.s3.region,
          AWS_DEFAULT_REGION: services.s3.region,
          AWS_ACCESS_KEY_ID: services.s3.accessKeyId,
          AWS_SECRET_ACCESS_KEY: services.s3.secretAccessKey,
          ...env(port, dir),
        },
        cwd: root,
      }
    },
  })
  const { PATH, HOME, PORT, TURNLINE_DATA_DIR, DENO_NO_UPDATE_CHECK, ...config } = ctx.env(0, '')
  const turnline = (extra: Record<string, string>) => ({
    ...config,
    TURNLINE_API_KEYS: `${KEY}=${TENANT}`,
    // A deployment names its tools' hosts; the receiver is on loopback.
    TURNLINE_TOOL_ALLOWED_HOSTS: new URL(tool.url).host,
    ...extra,
  })
  const auth = { authorization: `Bearer ${KEY}` }
  const targets = [
    target(
      'lambda: trivial Hono app (streamHandle)',
      'trivial',
      scratch('lambda-trivial'),
      () => ({}),
    ),
    target('lambda: same-work app (streamHandle)', 'same work', scratch('lambda-same'), (p, d) => ({
      TURNLINE_DATA_DIR: ctx.env(p, d).TURNLINE_DATA_DIR ?? d,
      OPENAI_BASE_URL: config.OPENAI_BASE_URL ?? '',
      SAME_WORK_TOOL_URL: tool.url,
      SAME_WORK_TOOL_SECRET: tool.secret,
    })),
    {
      ...target('lambda: build:lambda index.handler', 'turnline', scratch('built/lambda'), () =>
        turnline({
          S3_BUCKET: bucket.bucket,
          S3_ENDPOINT: services.s3.endpoint,
          S3_REGION: services.s3.region,
          S3_FORCE_PATH_STYLE: 'true',
          S3_ACCESS_KEY_ID: services.s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: services.s3.secretAccessKey,
          UPSTASH_REDIS_REST_URL: proxy.url,
          UPSTASH_REDIS_REST_TOKEN: proxy.token,
          TURNLINE_REDIS_NAMESPACE: bucket.bucket,
          TURNLINE_WORK_QUEUE_URL: queue.url,
        }),
      ),
      auth,
    },
    // The same bundle with sessions in the function's memory (TURNLINE_STORE=memory, no Upstash
    // or queue; the entry refuses a filesystem store): what of the cold start is S3's and
    // Upstash's (moto and the proxy) rather than the function's own. The workerd target's store.
    {
      ...target('lambda: build:lambda, memory store', 'turnline', scratch('built/lambda'), () =>
        turnline({ TURNLINE_STORE: 'memory' }),
      ),
      auth,
    },
  ]
  return {
    targets,
    async close() {
      await queue.destroy()
      await proxy.close()
      await bucket.destroy()
    },
  }
}
