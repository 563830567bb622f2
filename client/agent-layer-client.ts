import type { ArtifactKind, MemoryKind } from '../src/contract/artifacts.ts'
import {
  ArtifactListSchema,
  ArtifactViewSchema,
  DeliveryListSchema,
  LoopStepResponseSchema,
  LoopViewSchema,
} from '../src/contract/wire-responses.ts'
import type {
  CallOptions,
  DocumentBody,
  HandoffDocument,
  LoopCreateRequest,
  LoopStepRequest,
  ProgressUpdate,
} from './requests.ts'
import type { Transport } from './transport.ts'
import type {
  ArtifactList,
  ArtifactView,
  DeliveryList,
  LoopStepResponse,
  LoopView,
} from './types.ts'

const artifactsOf = (workspace: string, kind?: string) =>
  `/v1/workspaces/${encodeURIComponent(workspace)}/artifacts${kind ? `/${encodeURIComponent(kind)}` : ''}`

/** What `PUT …/artifacts/:kind` takes for each kind (the ledger is updated field by field). */
export type ArtifactPutBody<K extends ArtifactKind> = K extends 'progress'
  ? ProgressUpdate
  : K extends 'handoff'
    ? HandoffDocument
    : DocumentBody

/** A workspace's durable artifacts (docs/agent-layer.md); every view has an `etag`. */
export class ArtifactsClient {
  constructor(private readonly transport: Transport) {}

  /** Every artifact kind with its path and whether it exists. */
  list(workspace: string, options: CallOptions = {}): Promise<ArtifactList> {
    return this.transport.json('GET', artifactsOf(workspace), ArtifactListSchema, options)
  }

  /** One artifact; `not_found` when it does not exist. */
  get(workspace: string, kind: ArtifactKind, options: CallOptions = {}): Promise<ArtifactView> {
    return this.transport.json('GET', artifactsOf(workspace, kind), ArtifactViewSchema, options)
  }

  /** Replaces a document or the handoff, or updates the ledger; `ifMatch` → 409 on a change. */
  put<K extends ArtifactKind>(
    workspace: string,
    kind: K,
    body: ArtifactPutBody<K>,
    options: CallOptions & { ifMatch?: string } = {},
  ): Promise<ArtifactView> {
    return this.transport.json('PUT', artifactsOf(workspace, kind), ArtifactViewSchema, {
      body,
      headers: { 'if-match': options.ifMatch },
      signal: options.signal,
    })
  }

  /** Appends one entry to notes.md or decisions.md. */
  append(
    workspace: string,
    kind: MemoryKind,
    text: string,
    options: CallOptions = {},
  ): Promise<ArtifactView> {
    return this.transport.json('POST', artifactsOf(workspace, kind), ArtifactViewSchema, {
      body: { text },
      signal: options.signal,
    })
  }

  async delete(workspace: string, kind: ArtifactKind, options: CallOptions = {}): Promise<void> {
    const response = await this.transport.send('DELETE', artifactsOf(workspace, kind), options)
    await response.body?.cancel()
  }
}

const loop = (id: string, rest = '') => `/v1/loops/${encodeURIComponent(id)}${rest}`

/** Loop runs: a task stepped session by session within a budget (docs/agent-layer.md). */
export class LoopsClient {
  constructor(private readonly transport: Transport) {}

  /** `POST /v1/loops`: 409 when the chosen `loop_id` is taken. */
  create(request: LoopCreateRequest, options: CallOptions = {}): Promise<LoopView> {
    return this.transport.json('POST', '/v1/loops', LoopViewSchema, {
      body: request,
      signal: options.signal,
    })
  }

  get(id: string, options: CallOptions = {}): Promise<LoopView> {
    return this.transport.json('GET', loop(id), LoopViewSchema, options)
  }

  /** `GET /v1/loops/:id/deliveries`: `loop.stopped` of runs stopped before a step session. */
  listDeliveries(id: string, options: CallOptions = {}): Promise<DeliveryList> {
    return this.transport.json('GET', loop(id, '/deliveries'), DeliveryListSchema, options)
  }

  /** Runs or resumes the next step, or pauses, resumes, completes, fails it, or re-budgets it. */
  step(
    id: string,
    request: LoopStepRequest = {},
    options: CallOptions = {},
  ): Promise<LoopStepResponse> {
    return this.transport.json('POST', loop(id, '/step'), LoopStepResponseSchema, {
      body: request,
      signal: options.signal,
    })
  }
}
