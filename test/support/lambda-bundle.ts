import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { ConformanceCall } from './conformance-scenario.ts'
import {
  installLambdaGlobals,
  invokeStreaming,
  isStreamingHandler,
  urlEvent,
} from './lambda-runtime.ts'

const root = new URL('../../', import.meta.url).pathname

/** The Lambda bundle loaded in this process as the runtime loads it, called like an HTTP API. */
export interface LambdaBundle {
  call: ConformanceCall
  /** Deletes the build. */
  close(): Promise<void>
}

/** The bundle built into `out` and its module, loaded as the runtime loads it. */
export interface ImportedLambda {
  out: string
  module: Record<string, unknown>
}

/**
 * `npm run build:lambda` into a temp folder, its `index.mjs` imported with the runtime's
 * `awslambda` globals and `env` as its environment (read once, when the module loads). Each call
 * builds and loads its own copy. The caller deletes `out`.
 */
export async function importLambdaBundle(env: Record<string, string>): Promise<ImportedLambda> {
  const out = await mkdtemp(join(tmpdir(), 'turnline-lambda-'))
  const built = spawnSync(process.execPath, ['infra/build/build.mjs', 'lambda', '--out', out], {
    cwd: root,
    encoding: 'utf8',
  })
  if (built.status !== 0) {
    await rm(out, { recursive: true, force: true })
    throw new Error(`the Lambda build failed:\n${built.stdout}${built.stderr}`)
  }
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    installLambdaGlobals()
    const module = (await import(pathToFileURL(join(out, 'lambda/index.mjs')).href)) as Record<
      string,
      unknown
    >
    return { out, module }
  } catch (error) {
    await rm(out, { recursive: true, force: true })
    throw error
  } finally {
    process.env = saved
  }
}

/**
 * The bundle (`importLambdaBundle`) with `index.handler` called like an HTTP API: each request
 * invoked as a function URL event (payload 2.0) through the Runtime API stand-in
 * (lambda-runtime.ts).
 */
export async function loadLambdaBundle(env: Record<string, string>): Promise<LambdaBundle> {
  const { out, module } = await importLambdaBundle(env)
  const handler = module.handler
  if (!isStreamingHandler(handler)) {
    await rm(out, { recursive: true, force: true })
    throw new Error('index.handler is not a streaming handler')
  }
  const streaming = handler
  return {
    async call(request) {
      const answer = await invokeStreaming(
        streaming,
        urlEvent(request.method, request.path, request.headers ?? {}, request.body),
      )
      const headers = Object.fromEntries(
        Object.entries(answer.prelude.headers).map(([name, value]) => [name.toLowerCase(), value]),
      )
      return {
        status: answer.prelude.statusCode,
        contentType: headers['content-type'] ?? '',
        text: answer.body,
      }
    },
    close: () => rm(out, { recursive: true, force: true }),
  }
}
