/**
 * The workload of bench/turn-cost.ts, shared by every variant: a zero-latency mock of the OpenAI
 * Chat Completions API (the test suite's real Hono mock, streaming) that answers each turn's
 * first request with one call of the HTTP tool `lookup` and the request after the tool result
 * with a short text, and a signature-checking tool receiver behind `lookup`
 * (bench-tool-receiver.ts).
 */

import { deriveTenantSecret } from '../../functions/tool-secrets.ts'
import { type MockOpenAI, type MockStep, startMockOpenAI } from '../../test/support/mock-openai.ts'
import { startBenchToolReceiver } from './bench-tool-receiver.ts'
import { lookupFunction } from './scenario-tool.ts'

export { lookupFunction, MODEL } from './scenario-tool.ts'

/** TURNLINE_TOOL_SECRET of the Turnline variants; the receiver checks the derived secret. */
export const TOOL_MASTER_SECRET = 'bench-tool-master-secret'
/** The tenant of a single-tenant deployment (no API keys). */
export const TENANT = 'local'
export const ANSWER = 'Done: the change is in place.'

/** The session's one tool, as given at session creation. */
export const lookupTool = (url: string) => ({
  type: 'http' as const,
  name: 'lookup',
  description: 'Look a thing up',
  parameters: lookupFunction.function.parameters,
  url,
})

/** The mock's answer to one request: a call of `lookup` first, the answer after its result. */
export function mockReply(messages: unknown, callsTool: boolean): MockStep {
  const list = Array.isArray(messages) ? (messages as { role?: string; content?: unknown }[]) : []
  const last = list[list.length - 1]
  if (!callsTool || last?.role === 'tool') return { text: ANSWER }
  const asked = typeof last?.content === 'string' ? last.content : ''
  return { toolCalls: [{ name: 'lookup', arguments: JSON.stringify({ q: asked }) }] }
}

/** What a variant needs of the scenario: where the model and the tool are. */
export interface Endpoints {
  /** Whether each turn calls the tool once before answering (else it only answers). */
  callsTool: boolean
  mock: { baseURL: string }
  toolUrl: string
  /** The tenant's signing secret (what the raw loop signs its tool calls with). */
  toolSecret: string
}

export interface Scenario extends Endpoints {
  mock: MockOpenAI
  toolHost: string
  /** Tool calls answered with a valid signature so far. */
  toolCalls(): number
  /** Checks the mock saw no unexpected request, then drops what it recorded. */
  forget(): void
  close(): Promise<void>
}

export async function startScenario(options: { callsTool?: boolean } = {}): Promise<Scenario> {
  const callsTool = options.callsTool ?? true
  const mock = await startMockOpenAI()
  const responder = (request: { body: Record<string, unknown> }) =>
    mockReply(request.body.messages, callsTool)
  mock.respond(responder)
  const toolSecret = await deriveTenantSecret(TOOL_MASTER_SECRET, TENANT)
  const receiver = await startBenchToolReceiver(toolSecret)
  return {
    callsTool,
    mock,
    toolUrl: receiver.url,
    toolHost: receiver.host,
    toolSecret,
    toolCalls: () => receiver.validCalls(),
    forget() {
      mock.assertDone()
      mock.reset()
      mock.respond(responder)
    },
    async close() {
      await mock.close()
      await receiver.close()
    },
  }
}
