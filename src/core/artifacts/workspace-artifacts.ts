import type { EngineState } from '../../contract/engine-state.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { ToolHandler } from '../tools/tool-handler.ts'
import { ArtifactStore } from './artifact-store.ts'
import { artifactToolHandlers } from './artifact-tools.ts'

/** The artifacts of one workspace of a tenant. */
export function artifactStoreFor(deps: ServiceDeps, tenant: string, workspace: string) {
  return new ArtifactStore(deps.sessions.objects, deps.sessions.vtcodeRoot(tenant, workspace))
}

/**
 * The session's tools after its role: a verifier keeps only read-only sandbox tools (no HTTP
 * tools, no artifact tools); any other session gets the artifact tools unless
 * `harness.artifact_tools` is off.
 */
export function withAgentTools(
  deps: ServiceDeps,
  ref: { tenant: string; workspace: string; sessionId: string },
  state: EngineState,
  http: ToolHandler[],
  sandbox: ToolHandler[],
): ToolHandler[] {
  if (state.agent?.role === 'verifier') return sandbox.filter((handler) => handler.readOnly)
  if (!state.config.harness.artifact_tools) return [...http, ...sandbox]
  const store = artifactStoreFor(deps, ref.tenant, ref.workspace)
  const taken = new Set([...http, ...sandbox].map((handler) => handler.definition.name))
  // A session's own HTTP tool of the same name wins: its author chose the name on purpose.
  const tools = artifactToolHandlers(store, ref.sessionId).filter(
    (handler) => !taken.has(handler.definition.name),
  )
  return [...http, ...sandbox, ...tools]
}
