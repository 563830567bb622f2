import { TurnlineError } from '../../contract/errors.ts'
import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ParsedThreadEvent } from '../../contract/thread-event.ts'
import { LinearRegexError, linearRegex } from '../../shared/linear-regex.ts'
import { tailText } from '../orientation/artifact-summaries.ts'

/**
 * What a session did, read from its event log: the files its `file_change` items touched (in
 * first-touch order, with the last kind) and its command runs (`exec_command` / `write_stdin` /
 * `unified_exec` answers, grouped by the exec session they captured, output concatenated in
 * order). A `tool_output` item holds the text extracted from a command's answer, so the answer
 * itself (JSON) is read from the transcript's tool message of the same call; events written
 * before items held the text carry the JSON in the item.
 */

export interface CommandRun {
  /** The runner's exec session (`run-…`), or the invocation item id when it has none. */
  execSessionId: string
  command: string
  output: string
  /** Set once the command exited. */
  exitCode?: number
  exited: boolean
  spoolPath?: string
  /** Position of its last capture in the log (later runs have larger numbers). */
  order: number
}

export interface SessionActivity {
  modifiedFiles: { path: string; kind: 'add' | 'delete' | 'update' }[]
  commands: CommandRun[]
}

const EXEC_TOOLS = new Set(['exec_command', 'write_stdin', 'unified_exec'])

interface ExecAnswer {
  command?: unknown
  output?: unknown
  session_id?: unknown
  is_exited?: unknown
  exit_code?: unknown
  spool_path?: unknown
}

export function sessionActivity(
  events: readonly ParsedThreadEvent[],
  history: readonly HistoryMessage[] = [],
): SessionActivity {
  const answers = new Map<string, string>()
  for (const message of history) {
    if (message.role === 'tool') answers.set(message.tool_call_id, message.content)
  }
  const files = new Map<string, 'add' | 'delete' | 'update'>()
  const invocations = new Map<string, string>()
  const runs = new Map<string, CommandRun>()
  let order = 0
  for (const event of events) {
    if (event.type !== 'item.completed') continue
    const item = event.item
    order += 1
    if (item.type === 'file_change' && item.status === 'completed') {
      // First-touch order (Map insertion); the kind is the net one: a file added and then
      // updated in the session is still an addition.
      for (const change of item.changes) {
        const before = files.get(change.path)
        files.set(change.path, before === 'add' && change.kind === 'update' ? 'add' : change.kind)
      }
    } else if (item.type === 'tool_invocation') {
      invocations.set(item.id, item.tool_name)
    } else if (item.type === 'tool_output') {
      if (!EXEC_TOOLS.has(invocations.get(item.call_id) ?? '')) continue
      const answer =
        parseAnswer((item.tool_call_id && answers.get(item.tool_call_id)) || '') ??
        parseAnswer(item.output)
      if (typeof answer?.command !== 'string') continue
      const id = typeof answer.session_id === 'string' ? answer.session_id : item.call_id
      const previous = runs.get(id)
      const output = typeof answer.output === 'string' ? answer.output : ''
      const exited = answer.is_exited === true
      runs.set(id, {
        execSessionId: id,
        command: answer.command,
        output: previous ? `${previous.output}${output}` : output,
        exited,
        ...(typeof answer.exit_code === 'number' ? { exitCode: answer.exit_code } : {}),
        ...(typeof answer.spool_path === 'string'
          ? { spoolPath: answer.spool_path }
          : previous?.spoolPath
            ? { spoolPath: previous.spoolPath }
            : {}),
        order,
      })
    }
  }
  return {
    modifiedFiles: [...files].map(([path, kind]) => ({ path, kind })),
    commands: [...runs.values()].sort((a, b) => a.order - b.order),
  }
}

function parseAnswer(output: string): ExecAnswer | undefined {
  try {
    const value: unknown = JSON.parse(output)
    return value && typeof value === 'object' ? (value as ExecAnswer) : undefined
  } catch {
    return undefined
  }
}

export interface TestSelector {
  /** The exact command (trimmed) the caller marked as the test command. */
  command?: string | undefined
  /** Else: a regular expression a test command matches. */
  pattern: string
}

/** The last command run that is the test command. */
export function lastTestRun(
  activity: SessionActivity,
  selector: TestSelector,
): CommandRun | undefined {
  const marked = selector.command?.trim()
  if (marked !== undefined)
    return activity.commands.findLast((run) => run.command.trim() === marked)
  // The session's own pattern, against commands its model wrote: linear time, never backtracking,
  // and within a step budget for them all (a pattern stored before it had to suit the linear
  // engine may not compile: the same answer).
  try {
    const pattern = linearRegex(selector.pattern)
    const budget = pattern.budget()
    return activity.commands.findLast((run) => pattern.exec(run.command, budget) !== undefined)
  } catch (error) {
    if (!(error instanceof LinearRegexError)) throw error
    throw new TurnlineError(
      'invalid_input',
      `harness.test_command_pattern: ${error.message}, or name the command (test_command)`,
      { details: { field: 'harness.test_command_pattern' } },
    )
  }
}

/** `Command: …`, `Exit code: …`, the last 60 lines of output, and the spool when there is one. */
export function renderTestRun(run: CommandRun): string {
  const status =
    run.exitCode !== undefined
      ? `Exit code: ${run.exitCode}`
      : run.exited
        ? 'Exit code: unknown'
        : `Still running (exec session ${run.execSessionId})`
  const output = run.output.trim() === '' ? '(no output)' : tailText(run.output, 60, 4000)
  return [
    `Command: ${run.command}`,
    status,
    'Output:',
    output,
    ...(run.spoolPath ? [`Full output: ${run.spoolPath}`] : []),
  ].join('\n')
}
