import type {
  ArtifactEntry,
  ArtifactKind,
  ArtifactView,
  ArtifactWrite,
  MemoryKind,
} from '../../contract/artifacts.ts'
import type { HandoffResponse, HandoffRouteRequest } from '../../contract/handoff-request.ts'
import type { KeptOutputList, KeptOutputsQuery } from '../../contract/kept-output-list.ts'
import type {
  LoopCreateInput,
  LoopStepRequest,
  LoopStepResponse,
  LoopView,
} from '../../contract/loop-state.ts'
import type { OrientationView } from '../../contract/orientation-view.ts'
import type { VerifyRequest, VerifyResponse } from '../../contract/verification.ts'
import type { OutputArtifactRead } from '../../store/output-artifacts.ts'
import type { InvocationTimeLeft } from '../turn/invocation-deadline.ts'

/**
 * The agent-engineering face of the service (docs/agent-layer.md): workspace artifacts, the
 * orient phase, handoffs, loops and verification. Tenant-scoped like the rest of SessionApi.
 */
export interface AgentLayerApi {
  /**
   * A tool output a session kept whole (`out_…`, named in its preview): its descriptor and a
   * reader of its bytes; not_found when the session has no such artifact.
   */
  getOutputArtifact(tenant: string, sessionId: string, id: string): Promise<OutputArtifactRead>
  /**
   * A page of the tool outputs the session kept whole, by the call that answered each (derived
   * from its batches: core/tools/read-kept-outputs.ts).
   */
  listKeptOutputs(
    tenant: string,
    sessionId: string,
    query: KeptOutputsQuery,
  ): Promise<KeptOutputList>
  /** Every artifact kind of a workspace with its path and whether it exists. */
  listArtifacts(tenant: string, workspace: string): Promise<ArtifactEntry[]>
  /** One artifact; not_found when it does not exist. */
  getArtifact(tenant: string, workspace: string, kind: ArtifactKind): Promise<ArtifactView>
  /** Replaces a document, the handoff, or updates the ledger; 409 on an If-Match mismatch. */
  putArtifact(
    tenant: string,
    workspace: string,
    write: ArtifactWrite,
    options?: { ifMatch?: string },
  ): Promise<ArtifactView & { warnings?: string[] }>
  /** Appends one entry to notes.md or decisions.md. */
  appendArtifact(
    tenant: string,
    workspace: string,
    kind: MemoryKind,
    text: string,
  ): Promise<ArtifactView>
  deleteArtifact(tenant: string, workspace: string, kind: ArtifactKind): Promise<void>
  /**
   * The orientation frozen into the session's current request segment (null before its first
   * turn), the orient phase still pending, and with `preview` the one a new orient phase would
   * build now (not frozen).
   */
  getOrientation(
    tenant: string,
    sessionId: string,
    options?: { preview?: boolean },
  ): Promise<OrientationView>
  /**
   * The session's HandoffRequest, stored as the workspace's current handoff; optionally starts
   * the next agent's session with it and ends this one (`handed_off`). With an Idempotency-Key,
   * a retry finds the session the first call started.
   */
  handoff(
    tenant: string,
    sessionId: string,
    request: HandoffRouteRequest,
    options?: { idempotencyKey?: string },
  ): Promise<HandoffResponse>
  /**
   * Hands a proposed change (a turn's file changes, or named paths) to a read-only verifier
   * sub-agent; the verdict is a `harness` item in this session's stream and gates the change.
   */
  verify(tenant: string, sessionId: string, request: VerifyRequest): Promise<VerifyResponse>
  /** A loop run (`.vtcode/state/loop-<id>.json`); 409 when its id is taken. */
  createLoop(tenant: string, request: LoopCreateInput): Promise<LoopView>
  getLoop(tenant: string, loopId: string): Promise<LoopView>
  /** Runs (or resumes) the next step, or applies a control / budget change. */
  stepLoop(
    tenant: string,
    loopId: string,
    request: LoopStepRequest,
    /** `timeLeft`: the step runs in a request the platform bounds; its turn pauses before it. */
    options?: { timeLeft?: InvocationTimeLeft },
  ): Promise<LoopStepResponse>
}
