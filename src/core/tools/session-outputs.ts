import type { Admission } from '../../ports/admission.ts'
import { OutputArtifacts } from '../../store/output-artifacts.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import { DEPLOYMENT_CAPS, type OutputKeeping, type OutputQuota } from './kept-output.ts'

/** Default of the most one tool output may have in all (TURNLINE_TOOL_MAX_OUTPUT_BYTES). */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024

/** Default of the most a session's output artifacts may hold (TURNLINE_TOOL_MAX_SESSION_OUTPUT_BYTES). */
export const DEFAULT_MAX_SESSION_OUTPUT_BYTES = 1024 * 1024 * 1024

/** The session's output artifacts (`<session>/outputs/`). */
export function sessionOutputs(deps: ServiceDeps, ref: SessionRef): OutputArtifacts {
  return new OutputArtifacts(deps.sessions.objects, deps.sessions.keys(ref).root)
}

/** How the session keeps tool answers over the inline limit. */
export function outputKeeping(deps: ServiceDeps, ref: SessionRef): OutputKeeping {
  const { admission } = deps
  const perOutput = deps.tools.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES
  const perSession = deps.tools.maxSessionOutputBytes ?? DEFAULT_MAX_SESSION_OUTPUT_BYTES
  // The tenant's own caps, where lower than the deployment's, apply and are named in errors.
  const tenant = admission?.outputCaps?.(ref.tenant) ?? {}
  const ownOutput = tenant.perOutput !== undefined && tenant.perOutput < perOutput
  const ownSession = tenant.perSession !== undefined && tenant.perSession < perSession
  return {
    artifacts: sessionOutputs(deps, ref),
    maxBytes: ownOutput ? (tenant.perOutput ?? perOutput) : perOutput,
    maxSessionBytes: ownSession ? (tenant.perSession ?? perSession) : perSession,
    settings: {
      perOutput: ownOutput ? 'output_bytes_per_output' : DEPLOYMENT_CAPS.perOutput,
      perSession: ownSession ? 'output_bytes_per_session' : DEPLOYMENT_CAPS.perSession,
    },
    ...(admission ? { quota: tenantOutputQuota(admission, ref.tenant) } : {}),
  }
}

/** The tenant's daily quota of kept output (Admission.keepOutput), as the tools meet it. */
export function tenantOutputQuota(admission: Admission, tenant: string): OutputQuota {
  return {
    take: async (bytes) => {
      const verdict = await admission.keepOutput(tenant, bytes)
      return verdict.kept ? undefined : verdict.reason
    },
    give: (bytes) => admission.returnOutput(tenant, bytes),
  }
}
