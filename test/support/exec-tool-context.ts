import type { ExecToolContext } from '../../src/core/sandbox/exec-tools.ts'
import type { SandboxRunner, SandboxScope } from '../../src/ports/sandbox-runner.ts'

/**
 * For calling the exec tools directly on a runner: `context` is one invocation (a new tool-call
 * and item id, a 30 s budget unless `extra` says otherwise), `freshScope` a new session of
 * tenant `acme` named `<sessionPrefix>-<n>`.
 */
export function execToolCalls(runner: () => SandboxRunner, sessionPrefix: string) {
  let calls = 0
  let sessions = 0
  return {
    context(scope: SandboxScope, extra: Partial<ExecToolContext> = {}): ExecToolContext {
      calls += 1
      return {
        runner: runner(),
        scope,
        call: { toolCallId: `call_${calls}`, itemId: `item_${calls}` },
        now: Date.now,
        budgetMs: 30_000,
        ...extra,
      }
    },
    freshScope: (): SandboxScope => ({
      tenant: 'acme',
      sessionId: `${sessionPrefix}-${++sessions}`,
    }),
  }
}
