import { TurnlineError } from '../../contract/errors.ts'
import type { SandboxScope } from '../../ports/sandbox-runner.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'

/**
 * Erases a sandbox workspace on the deployment's runner (deleting a session, a loop's sandbox):
 * its commands end and every file goes (docs/runner-protocol.md, "Erasing a workspace"). A
 * deployment without a runner has none to erase. A runner that cannot do it — unreachable, a
 * refusal (its workspace kept changing), or one from before the route (404) — fails the
 * deletion with a retryable 503 `runner_unavailable`: the caller deletes again, and nothing
 * that must go is reported gone while it stays.
 */
export async function eraseSandbox(deps: ServiceDeps, scope: SandboxScope): Promise<void> {
  if (!deps.sandbox) return
  const result = await deps.sandbox.runner.eraseWorkspace(scope)
  if (result.ok) return
  throw new TurnlineError(
    'runner_unavailable',
    `the sandbox runner did not erase the workspace: ${result.refusal.message}`,
    { retryable: true, retryAfter: 1, details: { runner_code: result.refusal.code } },
  )
}
