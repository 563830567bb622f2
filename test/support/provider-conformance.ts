import { expect } from 'vitest'
import { createAnthropicModelClient } from '../../adapters/anthropic/anthropic-model-client.ts'
import { MemoryCoordinator } from '../../adapters/memory/memory-coordinator.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { createOpenAIModelClient } from '../../adapters/openai/openai-model-client.ts'
import type { ThreadEvent } from '../../src/contract/thread-event.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { ModelClient } from '../../src/ports/model-client.ts'
import { listAll } from '../../src/store/list-all.ts'
import { SessionStore } from '../../src/store/session-store.ts'
import { engineDeps } from './engine-deps.ts'
import type { CaseClient, CaseTurn, ProviderCase } from './provider-case.ts'
import type { ProviderReplay, ReplayRequest } from './provider-replay.ts'
import type { startToolReceiver } from './tool-receiver.ts'

type ToolReceiver = Awaited<ReturnType<typeof startToolReceiver>>

/** The model client a case runs on, pointed at the replay server. */
export function caseClient(client: CaseClient, baseURL: string): ModelClient {
  switch (client.adapter) {
    case 'openai':
      return createOpenAIModelClient({
        baseURL,
        apiKey: 'replay-key',
        provider: client.provider,
        maxRetries: 1,
        retry: { baseDelayMs: 1, maxDelayMs: 2 },
      })
    case 'anthropic':
      // The SDK appends /v1/messages to the endpoint.
      return createAnthropicModelClient({
        baseURL: baseURL.replace(/\/v1$/, ''),
        apiKey: 'replay-key',
        maxRetries: 1,
        retry: { baseDelayMs: 1, maxDelayMs: 2 },
      })
  }
}

const TENANT = 'conformance'

/**
 * Runs a case: creates its session, then steps each turn with a new service over the same
 * store (so every turn after the first rehydrates the transcript from the stored batches, as
 * another process would), serving the turn's recorded replies and checking what it expects.
 */
export async function runProviderCase(
  providerCase: ProviderCase,
  replay: ProviderReplay,
  receiver: ToolReceiver,
): Promise<void> {
  const store = new MemoryObjectStore()
  const coordinator = new MemoryCoordinator()
  const client = caseClient(providerCase.client, replay.baseURL)
  const deps = engineDeps(
    { store, coordinator, model: client, fetch: (...args) => fetch(...args) },
    [],
  )
  const service = () => new SessionService({ ...deps, sessions: new SessionStore({ store }) })
  const created = await service().createSession(TENANT, {
    model: providerCase.model,
    ...(providerCase.instructions ? { instructions: providerCase.instructions } : {}),
    tools: (providerCase.tools ?? []).map((name) => ({
      type: 'http' as const,
      name,
      description: `The ${name} tool`,
      parameters: { type: 'object' },
      url: receiver.url,
    })),
  })
  for (const [index, turn] of providerCase.turns.entries()) {
    const before = replay.requests.length
    replay.serve(...turn.replies)
    const outcome = await service().stepTurn(TENANT, created.session_id, { input: turn.input })
    const requests = replay.requests.slice(before)
    const label = `turn ${index + 1} of "${providerCase.name}"`
    checkTurn(label, turn, outcome.status, outcome.events, requests)
    if (turn.expect.session) {
      const view = await service().getSession(TENANT, created.session_id)
      expect(view, label).toMatchObject(turn.expect.session)
    }
  }
  replay.assertDone()
  await expectImagesStoredApart(store, providerCase)
}

/**
 * A `data:` image is kept once in the session's `images/` folder and named by reference: no
 * batch or checkpoint carries it inline (the model got it again from there on later turns).
 */
async function expectImagesStoredApart(store: MemoryObjectStore, providerCase: ProviderCase) {
  const { objects } = await listAll(store, '')
  const inline: string[] = []
  for (const { key } of objects) {
    if (!/\/(log|state)\//.test(key)) continue
    const text = new TextDecoder().decode((await store.get(key))?.body)
    if (text.includes(';base64,')) inline.push(key)
  }
  expect(inline, `${providerCase.name}: images inline in the log`).toEqual([])
  const sent = providerCase.turns.some(
    (turn) =>
      Array.isArray(turn.input) &&
      turn.input.some((part) => part.type === 'input_image' && part.image_url.startsWith('data:')),
  )
  const stored = objects.filter(({ key }) => /\/images\/[0-9a-f]{64}\.json$/.test(key))
  expect(stored.length > 0, `${providerCase.name}: images stored apart`).toBe(sent)
}

function checkTurn(
  label: string,
  turn: CaseTurn,
  status: string,
  events: ThreadEvent[],
  requests: ReplayRequest[],
): void {
  const sent = requests.map((request) => request.body)
  const { expect: want } = turn
  const failed = events.find((event) => event.type === 'turn.failed')
  expect(status, `${label}: ${failed?.type === 'turn.failed' ? failed.message : ''}`).toBe(
    want.status,
  )
  // Every item that started was completed, whatever the outcome.
  const started = new Set<string>()
  const completed: Record<string, unknown>[] = []
  for (const event of events) {
    if (event.type === 'item.started') started.add(event.item.id)
    if (event.type === 'item.completed') {
      started.delete(event.item.id)
      completed.push(event.item)
    }
  }
  expect([...started], `${label}: items left open`).toEqual([])
  if (want.items) expect(completed, label).toMatchObject(want.items)
  if (want.failure !== undefined) {
    expect(failed?.type === 'turn.failed' ? failed.message : '', label).toContain(want.failure)
  }
  if (want.usage) {
    const end = events.find((e) => e.type === 'turn.completed' || e.type === 'turn.failed')
    expect(end && 'usage' in end ? end.usage : undefined, `${label}: usage`).toEqual(want.usage)
  }
  if (want.requests) {
    expect(sent.length, `${label}: requests sent`).toBe(want.requests.length)
    for (const [i, body] of want.requests.entries()) {
      if (body !== undefined) expect(sent[i], `${label}: request ${i + 1}`).toMatchObject(body)
    }
  }
  want.check?.(
    sent,
    requests.map((request) => request.headers),
  )
}
