import { COMPACTION_TRIGGERS, CONTEXT_RESET_TRIGGERS } from '../../contract/enums.ts'
import type { JsonValue } from '../../contract/json-value.ts'
import type { KeptHookOutput } from '../../contract/kept-output-list.ts'
import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import type { ThreadItem } from '../../contract/thread-item.ts'
import type { Usage } from '../../contract/usage.ts'
import type {
  AtifAgent,
  AtifStep,
  AtifStepMetrics,
  AtifToolCall,
  AtifTrajectory,
} from './atif-types.ts'

/**
 * An ATIF v1.4 trajectory (Agent Trajectory Interchange Format) of a thread, built from its
 * ThreadEvents the way VT Code's exporter builds `derived/atif-trajectory.json`: completed items
 * become steps (agent messages, plans and reasoning as agent steps; a tool invocation paired
 * with its output as one agent step with `tool_calls` and an `observation`; command executions
 * and MCP calls likewise), turn ends, compactions, context resets, file changes, harness events
 * and errors as system steps; lifecycle events are skipped. Field order and the optional fields
 * left out are VT Code's. Two differences: steps carry no `timestamp` (the canonical log keeps
 * no time per event, and the export runs after the fact), and an `mcp_tool_call` item that
 * details a tool invocation (id `<invocation id>:mcp`) adds no second step for the same call.
 */
export const ATIF_SCHEMA_VERSION = 'ATIF-v1.4'

export type { AtifAgent, AtifStep, AtifStepMetrics, AtifToolCall, AtifTrajectory }

interface PendingInvocation {
  itemId: string
  toolCallId: string | undefined
  toolName: string
  arguments: JsonValue | undefined
}

const metricsOf = (usage: Usage): AtifStepMetrics => ({
  prompt_tokens: usage.input_tokens,
  completion_tokens: usage.output_tokens,
  ...(usage.cached_input_tokens > 0 ? { cached_tokens: usage.cached_input_tokens } : {}),
  ...(usage.cache_creation_tokens > 0
    ? { extra: { cache_creation_tokens: usage.cache_creation_tokens } }
    : {}),
})

/** VT Code reads a value it does not know as `unknown`, and writes it so. */
const known = (values: readonly string[], value: string) =>
  values.includes(value) ? value : 'unknown'

/** `planning_started` → `PlanningStarted`, as VT Code's Debug formatting names the kind. */
const pascal = (kind: string) =>
  kind
    .split('_')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('')

export class AtifTrajectoryBuilder {
  private readonly steps: AtifStep[] = []
  private readonly pending: PendingInvocation[] = []
  private sessionId: string | undefined
  private prompt = 0
  private completion = 0
  private cached = 0
  private turns = 0
  private sawTurnUsage = false

  constructor(private readonly agent: AtifAgent) {}

  push(event: ParsedThreadEvent): void {
    switch (event.type) {
      case 'thread.started':
        this.sessionId ??= event.thread_id
        return
      case 'thread.completed':
        this.sessionId ??= event.session_id
        this.turns = event.num_turns
        if (!this.sawTurnUsage) this.count(event.usage)
        return
      case 'turn.completed':
        this.sawTurnUsage = true
        this.count(event.usage)
        this.turns += 1
        this.step('system', { message: 'turn_completed', metrics: metricsOf(event.usage) })
        return
      case 'turn.failed':
        if (event.usage) {
          this.sawTurnUsage = true
          this.count(event.usage)
        }
        this.step('system', {
          message: event.message,
          ...(event.usage ? { metrics: metricsOf(event.usage) } : {}),
        })
        return
      case 'item.completed':
        this.item(event.item)
        return
      case 'thread.compact_boundary':
        this.step('system', {
          message: `context_compaction: ${event.original_message_count} messages -> ${event.compacted_message_count} messages (${known(COMPACTION_TRIGGERS, event.trigger)})`,
        })
        return
      case 'context.reset':
        this.step('system', {
          message: `context_reset: ${event.previous_context_usage_percent}% context used; plan preserved: ${event.plan_preserved}; tool budget reset: ${event.tool_budget_reset}`,
          extra: {
            thread_id: event.thread_id,
            turn_id: event.turn_id,
            trigger: known(CONTEXT_RESET_TRIGGERS, event.trigger),
            plan_preserved: event.plan_preserved,
            previous_context_usage_percent: event.previous_context_usage_percent,
            tool_budget_reset: event.tool_budget_reset,
          },
        })
        return
      case 'error':
        this.step('system', { message: event.message })
        return
      default:
        return
    }
  }

  finish(): AtifTrajectory {
    const { name, version, model } = this.agent
    return {
      schema_version: ATIF_SCHEMA_VERSION,
      session_id: this.sessionId ?? crypto.randomUUID(),
      agent: { name, version, ...(model ? { model_name: model } : {}) },
      steps: this.steps,
      final_metrics: {
        total_prompt_tokens: this.prompt,
        total_completion_tokens: this.completion,
        ...(this.cached > 0 ? { total_cached_tokens: this.cached } : {}),
        total_steps: this.steps.length,
        extra: { num_turns: this.turns },
      },
    }
  }

  /**
   * A hook answer kept whole (Turnline's: no event names it), as a system step that names its
   * artifact, never its text: placed after the last event of the batch that recorded it.
   */
  hookAnswer(kept: KeptHookOutput): void {
    const call = kept.tool_call_id === undefined ? '' : ` (call ${kept.tool_call_id})`
    this.step('system', {
      message: `hook_answer: ${kept.event} hook ${kept.hook}${call}: answer of ${kept.size} bytes (${kept.lines} lines) kept whole as artifact ${kept.artifact_id}`,
      extra: {
        hook_event: kept.event,
        hook: kept.hook,
        hook_index: kept.hook_index,
        hook_type: kept.hook_type,
        ...(kept.tool_call_id === undefined ? {} : { tool_call_id: kept.tool_call_id }),
        artifact_id: kept.artifact_id,
        size: kept.size,
        lines: kept.lines,
      },
    })
  }

  private count(usage: Usage): void {
    this.prompt += usage.input_tokens
    this.completion += usage.output_tokens
    this.cached += usage.cached_input_tokens
  }

  private step(source: AtifStep['source'], fields: Omit<AtifStep, 'step_id' | 'source'>): void {
    this.steps.push({ step_id: this.steps.length + 1, source, ...fields })
  }

  /** Long: one switch over the item types, a case each. */
  private item(item: ThreadItem): void {
    switch (item.type) {
      case 'agent_message':
        this.step('agent', { message: item.text })
        return
      case 'plan':
        this.step('agent', { message: item.text, extra: { vtcode_item_type: 'plan' } })
        return
      case 'reasoning':
        this.step('agent', { reasoning_content: item.text })
        return
      case 'tool_invocation':
        this.pending.push({
          itemId: item.id,
          toolCallId: item.tool_call_id,
          toolName: item.tool_name,
          arguments: item.arguments,
        })
        return
      case 'tool_output': {
        const at = this.pending.findIndex((p) => p.itemId === item.call_id)
        const invocation = at >= 0 ? this.pending.splice(at, 1)[0] : undefined
        const callId = invocation?.toolCallId ?? item.tool_call_id ?? item.call_id
        const suffix =
          item.status === 'failed'
            ? ' [FAILED]'
            : item.status === 'in_progress'
              ? ' [IN_PROGRESS]'
              : ''
        this.step('agent', {
          tool_calls: [
            {
              tool_call_id: callId,
              function_name: invocation?.toolName ?? 'unknown',
              ...(invocation?.arguments !== undefined ? { arguments: invocation.arguments } : {}),
            },
          ],
          observation: {
            results: [{ source_call_id: callId, content: `${item.output}${suffix}` }],
          },
        })
        return
      }
      case 'command_execution':
        this.step('agent', {
          tool_calls: [
            {
              tool_call_id: item.id,
              function_name: 'command_execution',
              arguments: { command: item.command, arguments: item.arguments ?? null },
            },
          ],
          observation: { results: [{ source_call_id: item.id, content: item.aggregated_output }] },
          ...(item.exit_code !== undefined ? { extra: { exit_code: item.exit_code } } : {}),
        })
        return
      case 'mcp_tool_call': {
        // `<invocation id>:mcp` details a tool invocation whose step its output item makes.
        if (item.id.endsWith(':mcp')) return
        this.step('agent', {
          tool_calls: [
            {
              tool_call_id: item.id,
              function_name: item.tool_name,
              ...(item.arguments !== undefined ? { arguments: item.arguments } : {}),
            },
          ],
          ...(item.result !== undefined
            ? { observation: { results: [{ source_call_id: item.id, content: item.result }] } }
            : {}),
        })
        return
      }
      case 'file_change':
        this.step('system', {
          message: `file_changes: ${item.changes.map((c) => `${c.path}: ${pascal(c.kind)}`).join(', ')}`,
        })
        return
      case 'web_search':
        this.step('system', {
          message: `web_search: ${item.query}`,
          ...(item.results
            ? {
                observation: {
                  results: item.results.map((content, i) => ({
                    source_call_id: `search_${i}`,
                    content,
                  })),
                },
              }
            : {}),
        })
        return
      case 'harness':
        this.step('system', {
          message: `harness: ${pascal(item.event)}`,
          ...(item.message !== undefined ? { extra: { harness_message: item.message } } : {}),
        })
        return
      case 'error':
        this.step('system', { message: item.message })
        return
    }
  }
}

/**
 * The trajectory of a whole thread (its events, from seq 0), as the JSON VT Code writes (pretty,
 * two-space indent), with a step for each hook answer the session kept whole after the event of
 * its `seq`.
 */
export function atifTrajectoryText(
  events: readonly ParsedThreadEvent[],
  agent: AtifAgent,
  hookAnswers: readonly KeptHookOutput[] = [],
): string {
  const builder = new AtifTrajectoryBuilder(agent)
  let next = 0
  events.forEach((event, seq) => {
    builder.push(event)
    for (let kept = hookAnswers[next]; kept && kept.seq <= seq; kept = hookAnswers[++next]) {
      builder.hookAnswer(kept)
    }
  })
  return JSON.stringify(builder.finish(), null, 2)
}
