import { createApp } from '../../functions/app.ts'
import { BackgroundWorker } from '../../functions/background/background-worker.ts'
import { createDeps, type Deps, type DepsOptions } from '../../functions/deps.ts'
import { SessionService } from '../../src/core/session-service.ts'
import { type RunningServer, serveApp } from './http-server.ts'
import type { TestS3 } from './services.ts'

export interface AppInstance {
  url: string
  deps: Deps
  /** Structured log entries of this instance (5xx faults, maintenance warnings). */
  logs: Record<string, unknown>[]
  close(): Promise<void>
}

/** Environment of a deployment on the local services: S3 (moto) and the Upstash proxy. */
export function deploymentEnv(input: {
  s3: TestS3
  bucket: string
  upstash: { url: string; token: string }
  modelBaseURL: string
  extra?: Record<string, string>
}): Record<string, string> {
  return {
    S3_BUCKET: input.bucket,
    S3_ENDPOINT: input.s3.endpoint,
    S3_REGION: input.s3.region,
    S3_FORCE_PATH_STYLE: 'true',
    S3_ACCESS_KEY_ID: input.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: input.s3.secretAccessKey,
    UPSTASH_REDIS_REST_URL: input.upstash.url,
    UPSTASH_REDIS_REST_TOKEN: input.upstash.token,
    // Its own keys in the shared redis-server: each test bucket is another deployment.
    TURNLINE_REDIS_NAMESPACE: input.bucket,
    OPENAI_BASE_URL: input.modelBaseURL,
    OPENAI_API_KEY: 'test',
    TURNLINE_MODEL: 'gpt-4o-mini',
    ...input.extra,
  }
}

/**
 * One app instance built by createDeps from an environment, like a deployment, served over real
 * HTTP. Several instances on the same bucket and coordinator stand for several processes (or a
 * restart): they share nothing in memory.
 */
export async function startAppInstance(
  env: Record<string, string>,
  options?: DepsOptions,
  /** With `background`: a background worker in the instance, as a long-running entry has. */
  runs: { background?: boolean } = {},
): Promise<AppInstance> {
  const deps = await createDeps(env, options)
  const logs: Record<string, unknown>[] = []
  const api = new SessionService(deps.service)
  const log = (entry: Record<string, unknown>) => logs.push(entry)
  const worker = runs.background
    ? new BackgroundWorker(api, { ...deps.background, log })
    : undefined
  const app = createApp({
    api,
    auth: deps.auth,
    ...deps.http,
    log,
    ...(worker ? { background: worker } : {}),
  })
  const server: RunningServer = await serveApp(app)
  worker?.start()
  const close = async () => {
    worker?.stop()
    await server.close()
  }
  return { url: server.url, deps, logs, close }
}

/** Instances on one environment (several processes, or restarts), all closed by `close`. */
export function appInstances(env: () => Record<string, string>) {
  const started: AppInstance[] = []
  return {
    async start(
      options?: DepsOptions,
      runs?: { background?: boolean; env?: Record<string, string> },
    ): Promise<AppInstance> {
      const instance = await startAppInstance({ ...env(), ...runs?.env }, options, runs)
      started.push(instance)
      return instance
    },
    async close(): Promise<void> {
      for (const instance of started.splice(0)) await instance.close()
    },
  }
}
