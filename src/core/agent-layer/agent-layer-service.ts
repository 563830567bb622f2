import type {
  ArtifactEntry,
  ArtifactKind,
  ArtifactView,
  ArtifactWrite,
  MemoryKind,
} from '../../contract/artifacts.ts'
import { TurnlineError } from '../../errors.ts'
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
import type { ServiceDeps } from '../service-deps.ts'
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
}
