import type { OpenAICompatibleProvider } from '../../adapters/openai/provider-profile.ts'
import type { TurnStatus } from '../../src/contract/api.ts'
import type { ModelSettingsInput } from '../../src/contract/model-config.ts'
import type { TurnInput } from '../../src/contract/turn-input.ts'
import type { Usage } from '../../src/contract/usage.ts'
import type { ReplayFrame, ReplayReply } from './provider-replay.ts'

/**
 * One provider conformance case: a session driven through the real engine and the real model
 * adapter against the replay server, turn by turn. Cases are written from the providers'
 * published documentation and public recordings; `source` says where each shape comes from.
 * Cases live in test/support/provider-cases/, one file per provider family; the suite is
 * test/integration/provider-conformance.test.ts.
 */
export interface ProviderCase {
  name: string
  /** Where the stream and error shapes come from (documentation pages, SDK sources, recordings). */
  source: string
  /** Which adapter answers, configured how (see caseClient in provider-conformance.ts). */
  client: CaseClient
  model: ModelSettingsInput & { name: string }
  /** The session's instructions (its system prompt), when the case needs one. */
  instructions?: string
  /** Session HTTP tools offered to the model, by name (each answers `{"echo": <arguments>}`). */
  tools?: string[]
  turns: CaseTurn[]
}

/**
 * The model client of a case. The OpenAI adapter is told which compatible provider it talks to;
 * the Anthropic adapter speaks the Messages API (sessions on `api: "anthropic"`).
 */
export type CaseClient =
  | { adapter: 'openai'; provider: OpenAICompatibleProvider }
  | { adapter: 'anthropic' }

export interface CaseTurn {
  /** The turn's input: a string, or text and image parts. */
  input: TurnInput
  /** The recorded replies, one per model request the turn makes. */
  replies: ReplayReply[]
  expect: CaseExpectation
}

export interface CaseExpectation {
  status: TurnStatus
  /**
   * Every item the turn completed, in order (`item.completed`), each matched as a subset: an
   * item the list does not name fails the case, as does one that started and never completed.
   */
  items?: Record<string, unknown>[]
  /** Part of the `turn.failed` message. */
  failure?: string
  /** The `turn.completed` usage (or `turn.failed`'s). */
  usage?: Usage
  /**
   * The request bodies this turn sent, in order, each matched as a subset (`undefined`: not
   * checked) — the transcript the adapter sends back lives here.
   */
  requests?: (Record<string, unknown> | undefined)[]
  /**
   * Checks on the request bodies beyond a subset match (e.g. a field that must be absent); the
   * requests' headers come second.
   */
  check?: (requests: Record<string, unknown>[], headers: Record<string, string>[]) => void
  /** Session totals after the turn, matched as a subset of `GET /v1/sessions/:id`. */
  session?: Record<string, unknown>
}

/** A streamed Chat Completions chunk as OpenAI frames it; providers add their own fields. */
export function chatChunk(
  fields: {
    id?: string
    model: string
    delta?: Record<string, unknown>
    finish_reason?: string | null
    usage?: Record<string, unknown> | null
  } & Record<string, unknown>,
): { data: Record<string, unknown> } {
  const { id, model, delta, finish_reason, usage, ...extra } = fields
  const choice = { index: 0, delta: delta ?? {}, finish_reason: finish_reason ?? null }
  return {
    data: {
      id: id ?? 'chatcmpl-replay',
      object: 'chat.completion.chunk',
      created: 1_760_000_000,
      model,
      choices: delta === undefined && finish_reason === undefined ? [] : [choice],
      ...(usage === undefined ? {} : { usage }),
      ...extra,
    },
  }
}

export const DONE = { data: '[DONE]' } as const

/** A chunk maker for one model (and the provider's own envelope fields). */
export const chunkOf =
  (model: string, extra: Record<string, unknown> = {}) =>
  (fields: Omit<Parameters<typeof chatChunk>[0], 'model'>) =>
    chatChunk({ model, ...extra, ...fields })

/** The frames of a Chat stream, closed with `[DONE]`. */
export const end = (frames: ReplayFrame[]): ReplayFrame[] => [...frames, DONE]

/** A delta with one whole tool call (index 0). */
export const toolCall = (id: string, name: string, args: string) => ({
  tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: args } }],
})
