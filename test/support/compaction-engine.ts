import { expect } from 'vitest'
import type { EngineState } from '../../src/contract/engine-state.ts'
import { parseEngineState } from '../../src/contract/engine-state.ts'
import type { HistoryMessage } from '../../src/contract/history-message.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { SUMMARY_INSTRUCTION } from '../../src/core/compaction/local-compaction.ts'
import { assertNoOrphans } from '../../src/core/compaction/protocol-groups.ts'
import type { ServiceDeps } from '../../src/core/engine/service-deps.ts'
import type { ModelRequest } from '../../src/ports/model-client.ts'
import type { MockOpenAI, MockRequest, MockStep } from './mock-openai.ts'
import type { ScriptedModelClient, ScriptedStep } from './scripted-model.ts'

/**
 * Helpers for the engine compaction tests: scripted agent replies, request transcripts. Each
 * works with the mock OpenAI server (requests as the wire carried them) and with the scripted
 * model (requests as the engine built them).
 */

/** A request the model received: over HTTP (mock) or in-process (scripted). */
export type SeenRequest = MockRequest | ModelRequest

interface ChatMessage {
  role: string
  content: string | null
  tool_call_id?: string
  tool_calls?: { id: string; function: { name: string; arguments: string } }[]
}

/** The transcript a request carried, as history messages. */
export function requestTranscript(request: SeenRequest): HistoryMessage[] {
  if (!('body' in request)) return request.messages
  const messages = (request.body.messages ?? []) as ChatMessage[]
  return messages.map((m): HistoryMessage => {
    const content = m.content ?? ''
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content }
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      }))
      return { role: 'assistant', content, ...(calls.length ? { tool_calls: calls } : {}) }
    }
    return { role: m.role === 'system' ? 'system' : 'user', content }
  })
}

/** The summary call: the summary instruction (or a manual one), then the transcript as text. */
export function isSummaryRequest(request: SeenRequest): boolean {
  const [first, second] = requestTranscript(request)
  return (
    first?.role === 'system' &&
    (first.content === SUMMARY_INSTRUCTION ||
      (second?.role === 'user' && second.content.startsWith('Summary requested at ')))
  )
}

/** No request the model received had a tool call without its result, or a result without call. */
export function assertNoOrphansInRequests(requests: readonly SeenRequest[]): void {
  expect(requests.length).toBeGreaterThan(0)
  for (const [index, request] of requests.entries()) {
    try {
      assertNoOrphans(requestTranscript(request))
    } catch (error) {
      throw new Error(`request #${index + 1}: ${(error as Error).message}`)
    }
  }
}

export interface AgentScript<Step> {
  /** Agent requests answered so far (summary calls excluded). */
  readonly served: number
  readonly summaries: number
  /** Requests that found the script empty. */
  readonly unexpected: string[]
  push(...steps: Step[]): void
}

interface AgentOptions<Step> {
  summary?: Step
  summaries?: Step[]
}

/**
 * Answers agent requests from `steps` in order and every summary request with `summary` (or the
 * next of `summaries` when given), whatever the order they come in.
 */
export function scriptAgent(
  model: MockOpenAI,
  steps?: MockStep[],
  options?: AgentOptions<MockStep>,
): AgentScript<MockStep>
export function scriptAgent(
  model: ScriptedModelClient,
  steps?: ScriptedStep[],
  options?: AgentOptions<ScriptedStep>,
): AgentScript<ScriptedStep>
export function scriptAgent(
  model: MockOpenAI | ScriptedModelClient,
  steps: (MockStep | ScriptedStep)[] = [],
  options: AgentOptions<MockStep | ScriptedStep> = {},
): AgentScript<MockStep | ScriptedStep> {
  const queue = [...steps]
  const summaries = [...(options.summaries ?? [])]
  const state = { served: 0, summaries: 0, unexpected: [] as string[] }
  const overHttp = 'baseURL' in model
  const answer = (request: SeenRequest): MockStep | ScriptedStep => {
    if (isSummaryRequest(request)) {
      state.summaries += 1
      return (
        summaries.shift() ??
        options.summary ?? {
          text: `Summary ${state.summaries}: the user ran scripted tasks.`,
          usage: { input_tokens: 200, output_tokens: 40 },
        }
      )
    }
    const step = queue.shift()
    if (!step) {
      state.unexpected.push(`agent request #${state.served + 1} found the script empty`)
      return overHttp
        ? { status: 500, code: 'script_exhausted', message: 'script exhausted' }
        : { fail: { kind: 'server', status: 500, message: 'script exhausted' } }
    }
    state.served += 1
    return step
  }
  if (overHttp) model.respond((request) => answer(request) as MockStep)
  else model.respond((request) => answer(request) as ScriptedStep)
  return {
    get served() {
      return state.served
    },
    get summaries() {
      return state.summaries
    },
    get unexpected() {
      return state.unexpected
    },
    push: (...more) => {
      queue.push(...more)
    },
  }
}

/** The committed transcript and engine state, read as the next invocation would. */
export async function committed(
  deps: ServiceDeps,
  tenant: string,
  sessionId: string,
  workspace = 'default',
): Promise<{ history: HistoryMessage[]; state: EngineState }> {
  const snapshot = await deps.sessions.open({ tenant, workspace, sessionId })
  return { history: snapshot.history, state: parseEngineState(snapshot.state) }
}

export function boundaries(events: readonly ThreadEvent[]) {
  return events.filter(
    (e): e is Extract<ThreadEvent, { type: 'thread.compact_boundary' }> =>
      e.type === 'thread.compact_boundary',
  )
}
