import type {
  ArtifactEntry,
  ArtifactKind,
  ArtifactView,
  ArtifactWrite,
  MemoryKind,
} from '../../contract/artifacts.ts'
import { parseEngineState } from '../../contract/engine-state.ts'
import { TurnlineError } from '../../contract/errors.ts'
import type { HandoffResponse, HandoffRouteRequest } from '../../contract/handoff-request.ts'
import type { KeptOutputsQuery } from '../../contract/kept-output-list.ts'
import type { LoopCreateInput, LoopStepRequest, LoopView } from '../../contract/loop-state.ts'
import type { OrientationView } from '../../contract/orientation-view.ts'
import type { VerifyRequest } from '../../contract/verification.ts'
import type { SessionLocator } from '../../store/session-locator.ts'
import { assertSegment } from '../../store/session-ref.ts'
import {
  appendMemory,
  deleteArtifact,
  putRefusal,
  readArtifact,
  writeArtifact,
} from '../artifacts/artifact-service.ts'
import { artifactStoreFor } from '../artifacts/workspace-artifacts.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { handoffSession } from '../handoff/handoff-step.ts'
import { createLoop, getLoop, stepLoop } from '../loops/loop-service.ts'
import { buildOrientation } from '../orientation/orient-step.ts'
import type { TurnOptions } from '../session-api.ts'
import { readKeptOutputs } from '../tools/read-kept-outputs.ts'
import { sessionOutputs } from '../tools/session-outputs.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'
import { verifyChange } from '../verifier/verify-change.ts'
import type { AgentLayerApi } from './agent-layer-api.ts'

/** The agent-engineering routes' side of SessionService (which extends it). */
export class AgentLayerService implements AgentLayerApi {
  constructor(
    protected readonly deps: ServiceDeps,
    protected readonly locator: SessionLocator,
  ) {}

  protected artifacts(tenant: string, workspace: string) {
    assertSegment('workspace', workspace)
    return artifactStoreFor(this.deps, tenant, workspace)
  }

  async getOutputArtifact(tenant: string, sessionId: string, id: string) {
    const ref = await this.locator.locate(tenant, sessionId)
    return sessionOutputs(this.deps, ref).open(id)
  }

  async listKeptOutputs(tenant: string, sessionId: string, query: KeptOutputsQuery) {
    const ref = await this.locator.locate(tenant, sessionId)
    const { lastBatch } = await this.deps.sessions.open(ref)
    const keys = this.deps.sessions.keys(ref)
    const outputs = sessionOutputs(this.deps, ref)
    return readKeptOutputs(this.deps.sessions.objects, keys, outputs, lastBatch, query)
  }

  async listArtifacts(tenant: string, workspace: string): Promise<ArtifactEntry[]> {
    return this.artifacts(tenant, workspace).list()
  }

  async getArtifact(tenant: string, workspace: string, kind: ArtifactKind): Promise<ArtifactView> {
    return readArtifact(this.artifacts(tenant, workspace), kind)
  }

  async putArtifact(
    tenant: string,
    workspace: string,
    write: ArtifactWrite,
    options: { ifMatch?: string } = {},
  ) {
    const refusal = putRefusal(write.kind)
    if (refusal) throw new TurnlineError('conflict', refusal, { retryable: false })
    return writeArtifact(this.artifacts(tenant, workspace), write, {
      sessionId: '',
      now: this.deps.clock.now(),
      ifMatch: options.ifMatch,
    })
  }

  async appendArtifact(tenant: string, workspace: string, kind: MemoryKind, text: string) {
    return appendMemory(this.artifacts(tenant, workspace), kind, text, this.deps.clock.now())
  }

  async deleteArtifact(tenant: string, workspace: string, kind: ArtifactKind): Promise<void> {
    await deleteArtifact(this.artifacts(tenant, workspace), kind)
  }

  async getOrientation(
    tenant: string,
    sessionId: string,
    options: { preview?: boolean } = {},
  ): Promise<OrientationView> {
    const ref = await this.locator.locate(tenant, sessionId)
    const snapshot = await this.deps.sessions.open(ref)
    const state = structuredClone(parseEngineState(snapshot.state))
    const agent = state.agent ?? {}
    const view: OrientationView = {
      session_id: sessionId,
      orientation: agent.orientation ?? null,
      ...(agent.orient_pending ? { pending: agent.orient_pending } : {}),
    }
    if (!options.preview) return view
    const warnings: string[] = []
    const reason = agent.orient_pending ?? 'session_start'
    const { frozen } = await buildOrientation({ deps: this.deps, ref, state, warnings }, reason)
    return { ...view, preview: frozen, ...(warnings.length ? { warnings } : {}) }
  }

  async handoff(
    tenant: string,
    sessionId: string,
    request: HandoffRouteRequest,
    options: { idempotencyKey?: string } = {},
  ): Promise<HandoffResponse> {
    const ref = await this.locator.locate(tenant, sessionId)
    return handoffSession(this.deps, this.locator, ref, request, options.idempotencyKey)
  }

  async createLoop(tenant: string, request: LoopCreateInput): Promise<LoopView> {
    return createLoop(this.deps, tenant, request)
  }

  async getLoop(tenant: string, loopId: string): Promise<LoopView> {
    return getLoop(this.deps, tenant, loopId)
  }

  async stepLoop(
    tenant: string,
    loopId: string,
    request: LoopStepRequest,
    options: { timeLeft?: InvocationTimeLeft } = {},
  ) {
    return stepLoop(this.deps, this.locator, tenant, loopId, request, {}, options)
  }

  async verify(tenant: string, sessionId: string, request: VerifyRequest, options?: TurnOptions) {
    const ref = await this.locator.locate(tenant, sessionId)
    return verifyChange(this.deps, this.locator, ref, request, options)
  }
}
