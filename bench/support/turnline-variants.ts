/**
 * The Turnline variants of bench/turn-cost.ts, each built through functions/deps.ts from an
 * environment record exactly as the Node entry builds them (store, coordinator, OpenAI adapter
 * against the mock, signed HTTP tools), with the object store and the coordinator wrapped to
 * count requests: in-process on the memory adapters, in-process on the fs store, over HTTP on
 * the fs store (the Hono app served on loopback), and in-process on S3 (moto) + Upstash
 * (redis-server behind the REST proxy).
 */

import { compile } from 'zod'
import { FsObjectStore } from '../../adapters/fs/fs-object-store.ts'
import { countingCoordinator } from '../../adapters/memory/counting-coordinator.ts'
import { countingObjectStore } from '../../adapters/memory/counting-object-store.ts'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { UpstashCoordinator } from '../../adapters/upstash/upstash-coordinator.ts'
import { nodeGzip } from '../../adapters/zlib/node-gzip.ts'
import { createApp } from '../../functions/app.ts'
import { createDeps, type DepsOptions } from '../../functions/deps.ts'
import type { TurnResponse } from '../../src/contract/api.ts'
import { useSchemaCompiler } from '../../src/contract/compiled-schema.ts'
import type { ServiceDeps } from '../../src/core/engine/service-deps.ts'
import { SessionService } from '../../src/core/session-service.ts'
import type { Coordinator } from '../../src/ports/coordinator.ts'
import type { ObjectStore } from '../../src/ports/object-store.ts'
import { listAll } from '../../src/store/list-all.ts'
import { serveApp } from '../../test/support/http-server.ts'
import { requireServices } from '../../test/support/services.ts'
import { createTestBucket } from '../../test/support/test-bucket.ts'
import { startUpstashProxy } from '../../test/support/upstash-proxy.ts'
import {
  ANSWER,
  type Endpoints,
  lookupTool,
  MODEL,
  TENANT,
  TOOL_MASTER_SECRET,
} from './turn-cost-scenario.ts'

export interface BenchSession {
  turn(input: string, idempotencyKey: string): Promise<void>
  /** Bytes the store keeps for this session. */
  bytes(): Promise<number>
}

export interface Variant {
  name: string
  newSession(index: number): Promise<BenchSession>
  /** Cumulative object-store requests (undefined: not an object store). */
  objectRequests(): number | undefined
  /** The same split by kind. */
  objectCounts?(): { get: number; put: number; list: number; delete: number; append?: number }
  /** Cumulative coordinator round trips (undefined: none). */
  coordinatorTrips(): number | undefined
  close(): Promise<void>
}

export const WORKSPACE = 'bench'

/** Counts coordinator calls: each method call is one round trip on the Upstash adapter. */
async function benchDeps(
  scenario: Endpoints,
  store: ObjectStore,
  dataDir: string,
  extra: { env?: Record<string, string>; options?: DepsOptions } = {},
): Promise<Awaited<ReturnType<typeof createDeps>>> {
  // What is written is checked through zod's compiled parsers, as Node's entries do (serveNodeEntry).
  useSchemaCompiler(compile)
  return createDeps(
    {
      TURNLINE_DATA_DIR: dataDir,
      OPENAI_BASE_URL: scenario.mock.baseURL,
      OPENAI_API_KEY: 'bench',
      TURNLINE_MODEL: MODEL,
      TURNLINE_TOOL_SECRET: TOOL_MASTER_SECRET,
      ...extra.env,
    },
    // Batches compressed as Node's entries compress them (nodeBackends).
    { defaultStore: () => store, log: () => {}, gzip: nodeGzip, ...extra.options },
  )
}

/**
 * Throws unless the turn ran the tool (when the workload calls it) and answered: a bench must
 * not time broken turns.
 */
export function checkTurn(response: TurnResponse, callsTool = true): void {
  const ran =
    !callsTool ||
    response.events.some(
      (e) =>
        e.type === 'item.completed' &&
        e.item.type === 'tool_output' &&
        e.item.status === 'completed',
    )
  const answered = response.events.some(
    (e) => e.type === 'item.completed' && e.item.type === 'agent_message' && e.item.text === ANSWER,
  )
  if (response.status !== 'completed' || !ran || !answered) {
    throw new Error(`unexpected turn outcome: ${JSON.stringify(response).slice(0, 2000)}`)
  }
}

async function sessionBytes(store: ObjectStore, service: ServiceDeps, sessionId: string) {
  return storedBytes(
    store,
    service.sessions.keys({ tenant: TENANT, workspace: WORKSPACE, sessionId }).root,
    sessionId,
  )
}

/** Bytes a store keeps for a session: its folder `root` and its pointer. */
export async function storedBytes(store: ObjectStore, root: string, sessionId: string) {
  const pointer = await listAll(store, `${TENANT}/.turnline/sessions/${sessionId}`)
  const folder = await listAll(store, root)
  return [...pointer.objects, ...folder.objects].reduce((sum, o) => sum + o.size, 0)
}

/** The engine called as a library (SessionService), on the given store and coordinator. */
export async function inProcessVariant(
  name: string,
  scenario: Endpoints,
  base: ObjectStore,
  dataDir: string,
  options: {
    coordinator?: Coordinator
    trips?: () => number
    close?: () => Promise<void>
    /** More environment and entry options of the deployment (bench/support/traced-variant.ts). */
    deployment?: { env?: Record<string, string>; options?: DepsOptions }
  } = {},
): Promise<Variant> {
  const counted = countingObjectStore(base)
  const deps = await benchDeps(scenario, counted.store, dataDir, options.deployment)
  const coord = countingCoordinator(options.coordinator ?? deps.service.coordinator)
  const service: ServiceDeps = { ...deps.service, coordinator: coord.coordinator }
  const api = new SessionService(service)
  const tool = lookupTool(scenario.toolUrl)
  return {
    name,
    async newSession() {
      const { session_id } = await api.createSession(TENANT, {
        workspace: WORKSPACE,
        tools: [tool],
      })
      return {
        async turn(input, idempotencyKey) {
          const response = await api.stepTurn(TENANT, session_id, { input }, { idempotencyKey })
          checkTurn(response, scenario.callsTool)
        },
        bytes: () => sessionBytes(counted.store, service, session_id),
      }
    },
    objectRequests: () => {
      const c = counted.counts
      return c.get + c.put + c.list + c.delete + c.append
    },
    objectCounts: () => ({ ...counted.counts }),
    coordinatorTrips: options.trips ?? coord.calls,
    close: options.close ?? (async () => {}),
  }
}

export const memoryVariant = (scenario: Endpoints, dataDir: string) =>
  inProcessVariant('in-process, memory adapters', scenario, new MemoryObjectStore(), dataDir)

export const fsVariant = (scenario: Endpoints, dataDir: string) =>
  inProcessVariant('in-process, fs store', scenario, new FsObjectStore({ root: dataDir }), dataDir)

/** The Hono app over real HTTP on loopback, deps from the env as `npm start` builds them. */
export async function httpVariant(scenario: Endpoints, dataDir: string): Promise<Variant> {
  const counted = countingObjectStore(new FsObjectStore({ root: dataDir }))
  const deps = await benchDeps(scenario, counted.store, dataDir)
  const coord = countingCoordinator(deps.service.coordinator)
  const service: ServiceDeps = { ...deps.service, coordinator: coord.coordinator }
  const app = createApp({ api: new SessionService(service), auth: deps.auth, ...deps.http })
  const server = await serveApp(app)
  return {
    ...httpClientVariant('over HTTP, fs store', server.url, scenario, (id) =>
      sessionBytes(counted.store, service, id),
    ),
    objectRequests: () => {
      const c = counted.counts
      return c.get + c.put + c.list + c.delete + c.append
    },
    objectCounts: () => ({ ...counted.counts }),
    coordinatorTrips: coord.calls,
    close: () => server.close(),
  }
}

/**
 * Sessions and turns POSTed to a Turnline server at `url` (single tenant: no API key; else
 * `auth`, e.g. `{ authorization: 'Bearer …' }`, on every request).
 */
export function httpClientVariant(
  name: string,
  url: string,
  scenario: Endpoints,
  bytes: (sessionId: string) => Promise<number>,
  auth: Record<string, string> = {},
): Variant {
  const tool = lookupTool(scenario.toolUrl)
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth, ...headers },
      body: JSON.stringify(body),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
    return JSON.parse(text) as unknown
  }
  return {
    name,
    async newSession() {
      const created = (await post('/v1/sessions', { workspace: WORKSPACE, tools: [tool] })) as {
        session_id: string
      }
      const id = created.session_id
      return {
        async turn(input, idempotencyKey) {
          const answer = await post(
            `/v1/sessions/${id}/turns`,
            { input },
            { 'idempotency-key': idempotencyKey },
          )
          checkTurn(answer as TurnResponse, scenario.callsTool)
        },
        bytes: () => bytes(id),
      }
    },
    objectRequests: () => undefined,
    coordinatorTrips: () => undefined,
    close: async () => {},
  }
}

/** S3 on moto_server + the Upstash coordinator on redis-server (`npm run services:start`). */
export async function s3Variant(scenario: Endpoints, dataDir: string): Promise<Variant> {
  const services = requireServices()
  const bucket = await createTestBucket(services.s3, 'turncost')
  const proxy = await startUpstashProxy({ redisUrl: services.redisUrl })
  const coordinator = new UpstashCoordinator({
    url: proxy.url,
    token: proxy.token,
    namespace: `bench-${Date.now()}:`,
  })
  return inProcessVariant(
    'in-process, S3 (moto) + Upstash',
    scenario,
    bucket.store('bench'),
    dataDir,
    {
      coordinator,
      trips: () => coordinator.requestCount,
      close: async () => {
        await proxy.close()
        await bucket.destroy()
      },
    },
  )
}
