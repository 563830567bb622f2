/**
 * "Engine alone": the turn engine of a given source tree on its memory adapters, with a model
 * client that streams in-process exactly what the mock streams (the tool call's arguments, then
 * the answer, in 4-character deltas) and an HTTP tool whose fetch answers in-process. No socket,
 * no mock server: what is left is the engine's own work per turn (lease, rehydrate, events,
 * commits, state), which bench/turn-cost.ts can compare across revisions (`--before`).
 * Modules are imported from `root`, so an earlier revision's engine runs its own code.
 */
import { join } from 'node:path'
import { nodeGzip } from '../../adapters/zlib/node-gzip.ts'
import type { TurnResponse } from '../../src/contract/api.ts'
import type { ServiceDeps } from '../../src/core/engine/service-deps.ts'
import type { ModelClient, ModelStreamEvent } from '../../src/ports/model-client.ts'
import { ANSWER, lookupTool, MODEL, TENANT } from './turn-cost-scenario.ts'
import { type BenchSession, checkTurn, type Variant } from './turnline-variants.ts'

const CHUNK = 4
const USAGE = {
  input_tokens: 1500,
  cached_input_tokens: 0,
  cache_creation_tokens: 0,
  output_tokens: 12,
}

/** Streams like the mock: a call of `lookup` with the user's text, then the answer. */
function stubModel(callsTool: boolean): ModelClient {
  let calls = 0
  return {
    async *stream(request): AsyncGenerator<ModelStreamEvent> {
      const last = request.messages[request.messages.length - 1]
      if (!callsTool || last?.role === 'tool') {
        for (let i = 0; i < ANSWER.length; i += CHUNK) {
          yield { type: 'text_delta', text: ANSWER.slice(i, i + CHUNK) }
        }
        const response = { text: ANSWER, toolCalls: [], usage: USAGE, stopReason: 'stop' }
        yield { type: 'completed', response }
        return
      }
      const id = `call_stub_${++calls}`
      const args = JSON.stringify({ q: typeof last?.content === 'string' ? last.content : '' })
      yield { type: 'tool_call_delta', index: 0, id, name: 'lookup', argumentsDelta: '' }
      for (let i = 0; i < args.length; i += CHUNK) {
        yield { type: 'tool_call_delta', index: 0, argumentsDelta: args.slice(i, i + CHUNK) }
      }
      const toolCalls = [{ id, name: 'lookup', arguments: args }]
      yield {
        type: 'completed',
        response: { text: '', toolCalls, usage: USAGE, stopReason: 'tool_calls' },
      }
    },
  }
}

/** Answers the tool's POST in-process with the receiver's echo. */
const echoFetch: typeof fetch = async (_input, init) => {
  const body = JSON.parse(String(init?.body)) as { arguments: unknown }
  return new Response(JSON.stringify({ echo: body.arguments }), {
    headers: { 'content-type': 'application/json' },
  })
}

export async function engineAloneVariant(
  root: string,
  label: string | undefined,
  callsTool: boolean,
): Promise<Variant> {
  const load = (path: string) => import(join(root, path))
  const { SessionService } = await load('src/core/session-service.ts')
  const { SessionStore } = await load('src/store/session-store.ts')
  const { MemoryObjectStore } = await load('adapters/memory/memory-object-store.ts')
  const { MemoryCoordinator } = await load('adapters/memory/memory-coordinator.ts')
  // The real clock and ids live in src/shared; a tree from before that had them in src/ports.
  const { systemClock } = await load('src/shared/system-clock.ts').catch(() =>
    load('src/ports/clock.ts'),
  )
  const { randomIds } = await load('src/shared/random-ids.ts').catch(() =>
    load('src/ports/clock.ts'),
  )
  const model = stubModel(callsTool)
  const deps: ServiceDeps = {
    // Batches compressed as Node's entries compress them (a revision before ignores it).
    sessions: new SessionStore({ store: new MemoryObjectStore(), gzip: nodeGzip }),
    coordinator: new MemoryCoordinator(),
    models: () => model,
    clock: systemClock,
    ids: randomIds,
    tools: {
      fetch: echoFetch,
      allowedHosts: ['127.0.0.1'],
      secretFor: () => 'bench-tenant-secret',
      timeoutMs: 30_000,
      maxResponseBytes: 1024 * 1024,
    },
    defaults: { model: MODEL, modelApi: 'chat', leaseMs: 30_000, idempotencyTtlSeconds: 86_400 },
    log: () => {},
  }
  const api = new SessionService(deps)
  const tool = lookupTool('http://127.0.0.1:9/tool')
  return {
    name: `engine alone (stub model and tool)${label ? ` [${label}]` : ''}`,
    async newSession(): Promise<BenchSession> {
      const created = (await api.createSession(TENANT, { workspace: 'bench', tools: [tool] })) as {
        session_id: string
      }
      return {
        async turn(input, idempotencyKey) {
          const response = (await api.stepTurn(
            TENANT,
            created.session_id,
            { input },
            {
              idempotencyKey,
            },
          )) as TurnResponse
          checkTurn(response, callsTool)
        },
        bytes: async () => 0,
      }
    },
    objectRequests: () => undefined,
    coordinatorTrips: () => undefined,
    close: async () => {},
  }
}
