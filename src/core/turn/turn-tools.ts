import type { EngineState } from '../../contract/engine-state.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import { appendingStore } from '../../store/events-file-state.ts'
import type { SessionRef } from '../../store/session-ref.ts'
import { withAgentTools } from '../artifacts/workspace-artifacts.ts'
import type { ServiceDeps } from '../engine/service-deps.ts'
import type { TurnWriter } from '../engine/turn-writer.ts'
import type { HookRunnerDeps } from '../hooks/run-hooks.ts'
import type { McpTools } from '../mcp/mcp-tools.ts'
import type { PermissionPolicy } from '../permissions/permission-policy.ts'
import { type CommandAllowance, sessionSandbox } from '../sandbox/session-sandbox.ts'
import { clientToolHandler } from '../tools/client-tool-handler.ts'
import { legacyHookAnswers } from '../tools/legacy-hook-answers.ts'
import { namesInputArtifact } from '../tools/output-preview.ts'
import { readOutputToolHandler } from '../tools/read-output-tool.ts'
import { outputKeeping } from '../tools/session-outputs.ts'
import type { ToolCallContext } from '../tools/tool-calls.ts'
import { httpToolHandler, ToolRegistry } from '../tools/tool-registry.ts'
import {
  type InvocationTimeLeft,
  pauseBeforeDeadline,
  toolCallWindowMs,
} from './invocation-deadline.ts'
import type { TurnMachine } from './turn-machine.ts'

/** Default wall-clock budget of one invocation for tool waits (edge platforms cut earlier). */
export const DEFAULT_INVOCATION_BUDGET_MS = 25_000

/**
 * The session's tools: its HTTP tools, the sandbox's built-ins when a runner is configured
 * (`unified_exec` only with `harness.unified_exec`), the artifact tools (withAgentTools), the
 * tools of its MCP servers, and `read_tool_output` for HTTP and MCP answers and command output
 * kept as artifacts (and for a turn input kept as one, while the transcript names it); then the client's function tools (`client_tools`), run by the client.
 */
export function sessionTools(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  mcp: McpTools | undefined,
  history: readonly HistoryMessage[],
  /** The session's last committed batch (the writer's), for reads of artifacts kept before v2. */
  lastBatch: () => number,
): ToolRegistry {
  const unified = state.config.harness.unified_exec === true
  const keeping = outputKeeping(deps, ref)
  const http = state.config.tools.map((tool) => httpToolHandler(tool, deps.tools, keeping))
  // Sessions with HTTP, MCP or command tools can page through outputs too long to show whole.
  const taken = new Set(http.map((tool) => tool.definition.name))
  const keys = deps.sessions.keys(ref)
  const legacy = legacyHookAnswers(deps.sessions.objects, keys, lastBatch)
  const reader = readOutputToolHandler(keeping.artifacts, legacy)
  const answering =
    http.length > 0 ||
    (mcp?.handlers.length ?? 0) > 0 ||
    deps.sandbox !== undefined ||
    history.some(namesInputArtifact)
  if (answering && !taken.has(reader.definition.name)) http.push(reader)
  const own = withAgentTools(
    deps,
    ref,
    state,
    http,
    (deps.sandbox
      ? sessionSandbox(deps.sandbox).tools(ref, placementOf(state), commandAllowance(state), {
          keeping,
          inlineBytes: deps.tools.maxResponseBytes,
        })
      : []
    ).filter((tool) => unified || tool.definition.name !== 'unified_exec'),
  )
  // The client's function tools take precedence: the client asked for them by name.
  const client = (state.config.client_tools ?? []).map(clientToolHandler)
  const clientNames = new Set(client.map((tool) => tool.definition.name))
  const served = own.filter((tool) => !clientNames.has(tool.definition.name))
  const names = new Set([...served, ...client].map((tool) => tool.definition.name))
  const discovered = (mcp?.handlers ?? []).filter((tool) => !names.has(tool.definition.name))
  return new ToolRegistry([...served, ...discovered, ...client])
}

/** What the session lets its commands and command hooks do. */
export function commandAllowance(state: EngineState): CommandAllowance {
  return { network: state.config.sandbox?.network ?? false }
}

function placementOf(state: EngineState) {
  const placed = state.sandbox_placement
  return placed ? { sessionId: placed.session_id, baseDir: placed.base_dir } : undefined
}

export function permissionPolicy(state: EngineState): PermissionPolicy {
  const { allow, deny, mode } = state.config.permissions
  return { allow, deny, mode: state.permission_mode ?? mode }
}

export function hookDeps(
  deps: ServiceDeps,
  ref: SessionRef,
  state: EngineState,
  signal?: AbortSignal,
  /** Records each answer kept whole in the batch with the hook's effect (TurnWriter). */
  onKept?: HookRunnerDeps['onKept'],
  /** The platform's bound on the invocation: a hook still running near it is stopped. */
  timeLeft?: InvocationTimeLeft,
): HookRunnerDeps {
  // A hook's answer is the operators' (a deny's is named to the model as it is given: runHooks).
  const keeping = outputKeeping(deps, ref)
  const kept = {
    keeping: { ...keeping, artifacts: keeping.artifacts.hidden() },
    inlineBytes: deps.tools.maxResponseBytes,
  }
  const runCommand = deps.sandbox
    ? sessionSandbox(deps.sandbox).runCommand(ref, commandAllowance(state), kept)
    : undefined
  return {
    tenant: ref.tenant,
    kept,
    http: deps.tools,
    now: () => deps.clock.now(),
    ...(runCommand ? { runCommand } : {}),
    ...(signal ? { signal } : {}),
    ...(onKept ? { onKept } : {}),
    ...(timeLeft ? { deadline: { timeLeft, clock: deps.clock } } : {}),
  }
}

/**
 * What every hook payload starts with. `transcript_path` is the session's `events.jsonl` key on
 * a store that keeps one (it appends: fs); null on one that cannot append (S3), whose events are
 * create-only parts and which has no such file.
 */
export function hookContext(deps: ServiceDeps, ref: SessionRef) {
  return {
    sessionId: ref.sessionId,
    cwd: deps.sandbox
      ? sessionSandbox(deps.sandbox).workspacePath(ref)
      : `${ref.tenant}/${ref.workspace}`,
    transcriptPath: appendingStore(deps.sessions.objects) ? deps.sessions.keys(ref).events : null,
  }
}

/** Everything the tool loop needs for this invocation's calls. */
export function toolCallContext(input: {
  deps: ServiceDeps
  ref: SessionRef
  turn: TurnMachine
  writer: TurnWriter
  warnings: string[]
  mcp?: McpTools | undefined
  /** `timeLeft`: the platform's bound on the invocation; calls are cut to it, rounds pause. */
  options: { signal?: AbortSignal | undefined; timeLeft?: InvocationTimeLeft | undefined }
}): ToolCallContext {
  const { deps, ref, turn, writer, warnings, mcp } = input
  const { signal, timeLeft } = input.options
  const { state } = turn
  const started = deps.clock.now()
  const nextItemId = () => turn.nextItemId()
  return {
    turn,
    dispatcher: writer.dispatcher,
    history: writer.history,
    tools: sessionTools(deps, ref, state, mcp, writer.history, () => writer.snapshot.lastBatch),
    policy: permissionPolicy(state),
    hooks: state.config.hooks,
    hookDeps: hookDeps(
      deps,
      ref,
      state,
      signal,
      (answer) => writer.recordHookAnswer(answer),
      timeLeft,
    ),
    hookContext: hookContext(deps, ref),
    warnings,
    nextItemId,
    now: () => deps.clock.now(),
    runContext: (call) => ({
      tenant: ref.tenant,
      sessionId: ref.sessionId,
      toolCallId: call.tool_call_id,
      itemId: call.item_id,
      rawArguments: call.arguments,
      now: () => deps.clock.now(),
      nextItemId,
      emit: (event) => writer.dispatcher.emit(event),
      remainingMs: () =>
        Math.min(
          (deps.defaults.invocationBudgetMs ?? DEFAULT_INVOCATION_BUDGET_MS) -
            (deps.clock.now() - started),
          toolCallWindowMs(timeLeft) ?? Number.POSITIVE_INFINITY,
        ),
      ...(timeLeft ? { windowMs: () => toolCallWindowMs(timeLeft) } : {}),
      ...(signal ? { signal } : {}),
    }),
    checkpoint: async () => {
      turn.apply({ type: 'turn_left_open' })
      await writer.commit(turn.open.turn_id, 'before_tools')
    },
    telemetry: deps.telemetry,
    ...(timeLeft ? { pauseBeforeCall: () => pausedRound(turn, warnings, timeLeft) } : {}),
  }
}

/**
 * Stops a round, `waiting`, when the platform's timeout is too near for another call (Lambda):
 * none of the calls left has started, so the round is no longer `tools_running` and the next
 * call runs them, once.
 */
function pausedRound(turn: TurnMachine, warnings: string[], timeLeft: InvocationTimeLeft) {
  const notice = pauseBeforeDeadline(timeLeft)
  if (!notice) return false
  warnings.push(notice)
  turn.apply({ type: 'tools_settled' })
  return true
}
