import { Agent, request } from 'node:http'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  installLambdaGlobals,
  isStreamingHandler,
  responseStream,
  type StreamingHandler,
} from '../../../test/support/lambda-runtime.ts'

/**
 * The Lambda cold start's bootstrap (bench/cold-start-platforms.ts, `lambda`), bundled by esbuild
 * into one plain-JS module as the Node.js runtime's own is: what that runtime does in a fresh
 * `node` process, after aws-lambda-ric. It installs `globalThis.awslambda`
 * (test/support/lambda-runtime.ts), imports `LAMBDA_TASK_ROOT/<module>.mjs` for `_HANDLER`
 * (`index.handler`), then loops on the Runtime API at `AWS_LAMBDA_RUNTIME_API`: `GET
 * /2018-06-01/runtime/invocation/next`, the handler called with the event, its response streamed
 * to `POST …/invocation/<id>/response`, the next `next` once the Runtime API has taken it. A load
 * that fails is posted to `…/init/error` and the process exits, as the runtime's does.
 */
const env = (name: string): string => {
  const value = process.env[name]
  if (!value) throw new Error(`the bootstrap needs ${name}`)
  return value
}
const api = env('AWS_LAMBDA_RUNTIME_API')
const port = Number(api.slice(api.lastIndexOf(':') + 1))
const [moduleName, exportName] = env('_HANDLER').split('.') as [string, string]
// One kept-alive connection for the `next` calls, as the runtime's client holds one.
const agent = new Agent({ keepAlive: true, maxSockets: 1 })

function call(
  method: string,
  path: string,
  body?: string,
): Promise<{ headers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port, method, path: `/2018-06-01/runtime${path}`, agent },
      (answer) => {
        let text = ''
        answer.setEncoding('utf8')
        answer.on('data', (chunk: string) => {
          text += chunk
        })
        answer.on('end', () => resolve({ headers: answer.headers, text }))
      },
    )
    outgoing.on('error', reject)
    outgoing.end(body)
  })
}

async function load(): Promise<StreamingHandler> {
  installLambdaGlobals()
  const file = join(env('LAMBDA_TASK_ROOT'), `${moduleName}.mjs`)
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>
  const handler = module[exportName]
  if (!isStreamingHandler(handler)) throw new Error(`${env('_HANDLER')} is not a streaming handler`)
  return handler
}

let handler: StreamingHandler
try {
  handler = await load()
} catch (error) {
  const { name, message } = error instanceof Error ? error : new Error(String(error))
  await call('POST', '/init/error', JSON.stringify({ errorType: name, errorMessage: message }))
  process.exit(1)
}

for (;;) {
  const { headers, text } = await call('GET', '/invocation/next')
  const id = String(headers['lambda-runtime-aws-request-id'])
  const stream = responseStream(port, id)
  const taken = new Promise<void>((resolve, reject) => {
    stream.once('response', () => resolve())
    stream.once('error', (error) => reject(error))
  })
  await handler(JSON.parse(text), stream, {
    awsRequestId: id,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    getRemainingTimeInMillis: () => Number(headers['lambda-runtime-deadline-ms']) - Date.now(),
  })
  await taken
}
