import { type AppInstance, deploymentEnv, startAppInstance } from './app-instance.ts'
import { type MockOpenAI, startMockOpenAI } from './mock-openai.ts'
import { requireServices } from './services.ts'
import { createTestBucket } from './test-bucket.ts'
import { startUpstashProxy, type UpstashProxy } from './upstash-proxy.ts'

/**
 * What a deployment runs on in a test: a fresh bucket on S3 (moto), the Upstash REST proxy in
 * front of redis-server, and the mock OpenAI server. `env` is a deployment's environment on
 * them (`deploymentEnv`), with `extra` variables on top.
 */
export interface TestBackends {
  bucket: Awaited<ReturnType<typeof createTestBucket>>
  proxy: UpstashProxy
  mock: MockOpenAI
  env(extra?: Record<string, string>): Record<string, string>
  /** Stops the mock and the proxy and deletes the bucket. */
  close(): Promise<void>
}

/** The backends plus one app instance on them (`startAppInstance`). */
export interface TestDeployment extends TestBackends {
  app: AppInstance
}

/** Starts the backends; `label` names the bucket. What started is stopped if a later part fails. */
export async function startTestBackends(label: string): Promise<TestBackends> {
  const services = requireServices()
  const closers: (() => Promise<void>)[] = []
  const close = async () => {
    for (const closeOne of closers.reverse().splice(0)) await closeOne()
  }
  try {
    const bucket = await createTestBucket(services.s3, label)
    closers.push(() => bucket.destroy())
    const proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
    closers.push(() => proxy.close())
    const mock = await startMockOpenAI()
    closers.push(() => mock.close())
    const env = (extra?: Record<string, string>) =>
      deploymentEnv({
        s3: services.s3,
        bucket: bucket.bucket,
        upstash: proxy,
        modelBaseURL: mock.baseURL,
        ...(extra === undefined ? {} : { extra }),
      })
    return { bucket, proxy, mock, env, close }
  } catch (error) {
    await close()
    throw error
  }
}

/** Starts the backends and one app instance on them, with `extra` in its environment. */
export async function startTestDeployment(
  label: string,
  extra?: Record<string, string>,
): Promise<TestDeployment> {
  const backends = await startTestBackends(label)
  try {
    const app = await startAppInstance(backends.env(extra))
    return {
      ...backends,
      app,
      async close() {
        await app.close()
        await backends.close()
      },
    }
  } catch (error) {
    await backends.close()
    throw error
  }
}
