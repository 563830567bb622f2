import type { ParsedThreadEvent } from '../src/contract/thread-event.ts'
import type { ThreadItem } from '../src/contract/thread-item.ts'
import { callSummary, clip, completionSummary, formatDuration, outputView } from './item-text.ts'
import { terminalSafe, terminalSafeValue } from './terminal-text.ts'

export interface ProgressTarget {
  write(text: string): unknown
  isTTY?: boolean
  columns?: number
}

interface RunningTool {
  name: string
  summary: string
  started: number
}

const NON_TTY_TICK_MS = 30_000

/**
 * The human view of a run on stderr, like `codex exec`: a line per finished item (tool calls with
 * their outcome, duration and the first lines of output; answers; failures) and, on a terminal,
 * one live line for what is in progress — a streaming answer, a running tool, a wait — with its
 * elapsed time, redrawn every second. Without a terminal there is no redrawing: a running tool
 * or wait prints a "still …" line every 30 s instead. What it shows of events and notes is
 * terminal-safe (`terminal-text.ts`) whatever the target: the only control sequences it writes
 * are its own colours and live-line redraws.
 */
export class Progress {
  private readonly tools = new Map<string, RunningTool>()
  /** Every tool call seen, by item id: what a later output item (or a wait) is about. */
  private readonly calls = new Map<string, RunningTool>()
  private live: { text: () => string; since: number } | undefined
  private drawn = false
  private timer: ReturnType<typeof setInterval> | undefined
  private nextTick = 0
  private readonly started = Date.now()
  /** Item id of the tool the turn waits on (its live line says so; announced once). */
  private waitingOn: string | undefined

  private readonly color: boolean
  /** Durations and elapsed times (off when replaying stored events, whose timing is not known). */
  private readonly timings: boolean

  constructor(
    private readonly out: ProgressTarget,
    options: { color: boolean; timings?: boolean },
  ) {
    this.color = options.color
    this.timings = options.timings ?? true
  }

  /** A permanent line (the live line is redrawn under it); its text is terminal-safe already. */
  private line(text: string): void {
    this.clearLive()
    this.out.write(`${text}\n`)
    this.drawLive()
  }

  note(text: string): void {
    this.line(this.paint('dim', terminalSafe(text)))
  }

  warn(text: string): void {
    this.line(this.paint('yellow', `warning: ${terminalSafe(text)}`))
  }

  /** The turn is parked on a running tool (a command's wait): shown until the tool ends. */
  waiting(): void {
    const entry = [...this.tools.entries()].at(-1)
    if (!entry) return
    const [id, tool] = entry
    if (this.waitingOn === id) return
    this.waitingOn = id
    if (!this.out.isTTY)
      this.line(`… waiting on ${describe(tool)} (the turn continues when it exits)`)
    this.showTool(id, tool)
  }

  /**
   * Takes note of an earlier event without showing it: a resumed run (or `events --after`)
   * learns which tool each call id is, so the output of a call made before it names the tool.
   */
  learn(event: ParsedThreadEvent): void {
    if (event.type !== 'item.completed' && event.type !== 'item.started') return
    const item = terminalSafeValue(event.item)
    if (item.type !== 'tool_invocation') return
    this.calls.set(item.id, {
      name: item.tool_name,
      summary: callSummary(item.tool_name, item.arguments),
      started: Date.now(),
    })
  }

  /** An event's lines: every string in it (model and tenant text) made terminal-safe first. */
  event(event: ParsedThreadEvent): void {
    const text = this.textOf(terminalSafeValue(event))
    if (text !== undefined) this.line(text)
  }

  /** The permanent line an event adds (undefined: none), updating the live line on the way. */
  private textOf(event: ParsedThreadEvent): string | undefined {
    switch (event.type) {
      case 'item.started':
      case 'item.updated':
        this.itemProgress(event.item)
        return undefined
      case 'item.completed':
        return this.itemDone(event.item)
      case 'turn.failed':
        this.setLive(undefined)
        return this.paint('red', `turn failed: ${event.message}`)
      case 'permission.requested':
        return this.paint('yellow', `permission needed to run ${event.tool_name}`)
      case 'permission.resolved':
        return this.paint('dim', `permission for ${event.tool_name}: ${event.decision}`)
      case 'plan.approval.requested':
        return this.paint('yellow', 'a plan waits for approval')
      case 'thread.compact_boundary':
        return this.paint(
          'dim',
          `context compacted (${event.trigger}, ${event.original_message_count} → ${event.compacted_message_count} messages)`,
        )
      case 'context.reset':
        return this.paint('dim', 'context reset for the approved plan')
      case 'interjected':
        return this.paint('dim', 'a queued follow-up was applied')
      case 'error':
        return this.paint('red', `error: ${event.message}`)
      case 'thread.completed': {
        this.setLive(undefined)
        const mark = event.subtype === 'success' ? this.paint('green', '✓') : this.paint('red', '✗')
        const elapsed = this.timings ? Date.now() - this.started : undefined
        return `${mark} ${completionSummary(event, elapsed)}`
      }
      default:
        return undefined
    }
  }

  private itemProgress(item: ThreadItem): void {
    if (item.type === 'agent_message') {
      this.setLive(() => `assistant: ${item.text.replace(/\s+/g, ' ')}`, Date.now())
    } else if (item.type === 'tool_invocation') {
      const known = this.tools.get(item.id)
      const tool: RunningTool = {
        name: item.tool_name,
        summary:
          item.arguments === undefined
            ? (known?.summary ?? '')
            : callSummary(item.tool_name, item.arguments),
        started: known?.started ?? Date.now(),
      }
      this.tools.set(item.id, tool)
      this.calls.set(item.id, tool)
      this.showTool(item.id, tool)
    }
  }

  /** The live line of a running tool: what it does and for how long it has run (or been awaited). */
  private showTool(id: string, tool: RunningTool): void {
    const prefix = this.waitingOn === id ? '… waiting on' : '▸'
    this.setLive(
      () => `${prefix} ${describe(tool)} · ${formatDuration(Date.now() - tool.started)}`,
      tool.started,
    )
  }

  private itemDone(item: ThreadItem): string | undefined {
    switch (item.type) {
      case 'agent_message':
        this.setLive(undefined)
        return item.text.trim()
          ? `${this.paint('cyan', 'assistant')}\n${item.text.trimEnd()}`
          : undefined
      case 'reasoning':
        return this.paint('dim', `thinking: ${clip(item.text.replace(/\s+/g, ' '), 160)}`)
      case 'plan':
        return `${this.paint('cyan', 'plan')}\n${item.text.trimEnd()}`
      case 'tool_invocation':
        return this.invocationDone(item)
      case 'tool_output': {
        const running = this.tools.get(item.call_id)
        const tool = running ?? this.calls.get(item.call_id)
        this.tools.delete(item.call_id)
        this.setLive(undefined)
        const view = outputView(item.output, item.exit_code, item.status === 'failed', tool?.name)
        const took =
          running && this.timings ? ` · ${formatDuration(Date.now() - running.started)}` : ''
        const mark = view.ok ? this.paint('green', '✓') : this.paint('red', '✗')
        // Never an item id: the tool and what it did, or — a call this view never saw — its kind.
        const head = `${mark} ${tool ? describe(tool) : 'a tool call'} · ${view.status}${took}`
        return [head, ...view.lines.map((l) => this.paint('dim', `  │ ${l}`))].join('\n')
      }
      case 'file_change':
        return item.changes.map((c) => `✎ ${c.kind} ${c.path}`).join('\n')
      case 'command_execution':
        return `$ ${item.command}${item.exit_code === undefined ? '' : ` · exit ${item.exit_code}`}`
      case 'error':
        return this.paint('red', `error: ${item.message}`)
      default:
        return undefined
    }
  }

  /** A tool call whose arguments are complete: it runs now (live line) or was refused. */
  private invocationDone(
    item: Extract<ThreadItem, { type: 'tool_invocation' }>,
  ): string | undefined {
    const known = this.tools.get(item.id)
    const tool: RunningTool = {
      name: item.tool_name,
      summary: callSummary(item.tool_name, item.arguments),
      started: known?.started ?? Date.now(),
    }
    this.tools.set(item.id, tool)
    this.calls.set(item.id, tool)
    if (item.outcome && item.outcome !== 'success') {
      this.tools.delete(item.id)
      this.setLive(undefined)
      return this.paint('red', `✗ ${describe(tool)} · ${item.outcome}`)
    }
    // It runs now: the live line shows it; without a terminal its ✓/✗ line will say it all.
    this.showTool(item.id, tool)
    return undefined
  }

  /** Stops the timer and clears the live line (before the process exits). */
  close(): void {
    this.setLive(undefined)
  }

  private setLive(text: (() => string) | undefined, since = Date.now()): void {
    this.clearLive()
    this.live = text ? { text, since } : undefined
    this.nextTick = since + NON_TTY_TICK_MS
    if (this.live && !this.timer) {
      this.timer = setInterval(() => this.tick(), 1000)
      this.timer.unref?.()
    } else if (!this.live && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
    this.drawLive()
  }

  private tick(): void {
    if (!this.live) return
    if (this.out.isTTY) {
      this.clearLive()
      this.drawLive()
    } else if (Date.now() >= this.nextTick) {
      this.nextTick += NON_TTY_TICK_MS
      this.out.write(`${this.live.text().replace(/^▸/, '… still running:')}\n`)
    }
  }

  private drawLive(): void {
    if (!this.live || !this.out.isTTY) return
    const width = Math.max(20, (this.out.columns || 80) - 1)
    this.out.write(this.paint('dim', clip(this.live.text(), width)))
    this.drawn = true
  }

  private clearLive(): void {
    if (!this.drawn) return
    this.out.write('\r\x1b[2K')
    this.drawn = false
  }

  private paint(style: 'dim' | 'red' | 'green' | 'yellow' | 'cyan', text: string): string {
    if (!this.color) return text
    const code = { dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 }[style]
    return `\x1b[${code}m${text}\x1b[0m`
  }
}

function describe(tool: RunningTool): string {
  return tool.summary ? `${tool.name} ${clip(tool.summary.replace(/\s+/g, ' '), 120)}` : tool.name
}
