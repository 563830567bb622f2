import type {
  ArtifactEntry,
  ArtifactKind,
  ArtifactView,
  ArtifactWrite,
  MemoryKind,
} from '../../contract/artifacts.ts'

/**
 * The agent-engineering face of the service (docs/agent-layer.md): workspace artifacts, the
 * orient phase, handoffs, loops and verification. Tenant-scoped like the rest of SessionApi.
 */
export interface AgentLayerApi {
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
}
