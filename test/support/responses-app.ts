import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, expect } from 'vitest'
import { createApp } from '../../functions/app.ts'
import { startEngine } from './engine-harness.ts'
import { type RunningServer, serveApp } from './http-server.ts'
import type { MockRequest } from './mock-openai.ts'
import { responseResourceErrors } from './open-responses-schema.ts'

type Json = Record<string, unknown>

/** The function tool of the specification's examples (and of the compliance suite). */
export const WEATHER_TOOL = {
  type: 'function',
  name: 'get_weather',
  description: 'Get the current weather for a location',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'The city and state' } },
    required: ['location'],
  },
}

/**
 * A mock model for client-tool loops: a call of `get_weather` (for `location`) when offered it
 * right after a user message, `The tool said: <output>` after the tool's output, otherwise what
 * `otherwise` makes of the messages it was sent.
 */
export function weatherModel(location: string, otherwise: (messages: Json[]) => string) {
  return (request: MockRequest) => {
    const messages = (request.body.messages ?? []) as Json[]
    const tools = (request.body.tools ?? []) as { function: { name: string } }[]
    const last = messages.at(-1)
    if (last?.role === 'user' && tools.some((t) => t.function.name === 'get_weather')) {
      return { toolCalls: [{ name: 'get_weather', arguments: JSON.stringify({ location }) }] }
    }
    if (last?.role === 'tool') return { text: `The tool said: ${String(last.content)}` }
    return { text: otherwise(messages) }
  }
}

/** A response resource as the tests read it. */
export interface ResponseJson extends Json {
  id: string
  status: string
  output: Json[]
  tools: Json[]
  previous_response_id: string | null
}

/**
 * The app over real HTTP on a real engine (mock OpenAI model) with one API key, and the
 * `/v1/responses` calls the Open Responses tests make.
 */
export interface ResponsesApp {
  engine: Awaited<ReturnType<typeof startEngine>>
  server: RunningServer
  /** `authorization: Bearer <key>` for the app's one key. */
  auth: { authorization: string }
  post(body: unknown, headers?: Record<string, string>): Promise<Response>
  /** POSTs and expects 200 with a response resource that conforms to the published schema. */
  create(body: unknown, headers?: Record<string, string>): Promise<ResponseJson>
  close(): Promise<void>
}

export async function startResponsesApp(key: string, tenant: string): Promise<ResponsesApp> {
  const engine = await startEngine()
  const server = await serveApp(
    createApp({ api: engine.service, auth: { keys: [{ key, tenant }] }, log: () => {} }),
  )
  const auth = { authorization: `Bearer ${key}` }
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  return {
    engine,
    server,
    auth,
    post,
    async create(body, headers = {}) {
      const res = await post(body, headers)
      const text = await res.text()
      expect(res.status, text).toBe(200)
      const response = JSON.parse(text) as ResponseJson
      expect(responseResourceErrors(response, false)).toEqual([])
      return response
    },
    async close() {
      await server.close()
      await engine.close()
    },
  }
}

/**
 * The app of a test file with the `openai` client (default configuration, no retries) on it:
 * started before the file's tests, its mock model reset before each, closed after them.
 */
export function usedResponsesApp(
  key: string,
  tenant: string,
): ResponsesApp & { readonly client: OpenAI } {
  let started: { app: ResponsesApp; client: OpenAI } | undefined
  const current = () => {
    if (!started) throw new Error('the responses app is used before its start')
    return started
  }
  beforeAll(async () => {
    const app = await startResponsesApp(key, tenant)
    started = {
      app,
      client: new OpenAI({ apiKey: key, baseURL: `${app.server.url}/v1`, maxRetries: 0 }),
    }
  })
  afterAll(async () => {
    await started?.app.close()
  })
  beforeEach(() => current().app.engine.mock.reset())
  return {
    get engine() {
      return current().app.engine
    },
    get server() {
      return current().app.server
    },
    get auth() {
      return current().app.auth
    },
    get client() {
      return current().client
    },
    post: (body, headers) => current().app.post(body, headers),
    create: (body, headers) => current().app.create(body, headers),
    close: () => current().app.close(),
  }
}
