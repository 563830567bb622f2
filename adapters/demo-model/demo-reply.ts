import type { HistoryMessage, ToolCall } from '../../src/contract/history-message.ts'
import type { ModelRequest } from '../../src/ports/model-client.ts'
import { type DemoIntent, demoIntent } from './demo-prompt-intent.ts'
import { schemaSample } from './schema-sample.ts'

/** Every answer of the demo model starts with this, so nobody mistakes it for a real model. */
export const DEMO_LABEL = '[offline demo model]'
/** Its own model name; other names get an answer that says it stands in for them. */
export const DEMO_MODEL = 'turnline-demo'

export interface DemoReply {
  text: string
  reasoning: string
  toolCalls: ToolCall[]
}

const HINT =
  'Ask me to run `ls -la`, read README.md, or write notes.txt: hello, and I call exec_command, ' +
  'read_file or write_file so you can watch the loop. Set OPENAI_API_KEY (or OPENAI_BASE_URL) ' +
  'and TURNLINE_MODEL, then restart, for a real model.'

/**
 * The whole decision of the demo model, a pure function of the request: after tool results it
 * reports them (or waits on a command still running); after a user message it calls the tool the
 * message asks for, or answers with what it can do. A summary request (compaction) gets a
 * summary of the user's messages.
 */
export function demoReply(request: ModelRequest): DemoReply {
  const messages = request.messages
  const last = messages.at(-1)
  if (last?.role === 'user' && last.content.startsWith('Summary requested at')) {
    return answer(summaryOf(last.content), 'This is a compaction request: I list the user turns.')
  }
  if (last?.role === 'tool') return afterTools(request)
  const prompt = lastUserText(messages)
  const intent = prompt === undefined ? undefined : demoIntent(prompt)
  if (intent) {
    if (!request.tools.some((tool) => tool.name === intent.tool)) {
      return answer(
        `${DEMO_LABEL} You asked for ${intent.tool}, but this session has no such tool ` +
          '(no sandbox runner is configured). Without tools I can only answer.',
        `The request maps to ${intent.tool}, which is not offered.`,
      )
    }
    return call(request, intent.tool, intent.args, reasonFor(intent))
  }
  const standIn =
    request.model === DEMO_MODEL
      ? ''
      : ` (answering for "${request.model}": no model endpoint is set)`
  return final(
    request,
    `${DEMO_LABEL} This is Turnline's built-in offline demo model${standIn}, not a language model. ` +
      `You wrote: "${preview(prompt ?? '', 200)}". ${HINT}`,
    'No tool request recognised in the prompt: I answer with what I can do.',
  )
}

/** After the results of the tool calls of the last assistant message. */
function afterTools(request: ModelRequest): DemoReply {
  const messages = request.messages
  const start = messages.findLastIndex((m) => m.role === 'assistant')
  const assistant = messages[start]
  const calls = assistant?.role === 'assistant' ? (assistant.tool_calls ?? []) : []
  const results = messages.slice(start + 1).filter((m) => m.role === 'tool')
  const lines: string[] = []
  for (const result of results) {
    const name = calls.find((c) => c.id === result.tool_call_id)?.name ?? 'tool'
    const exec = execResult(result.content)
    if (exec?.running && request.tools.some((t) => t.name === 'write_stdin')) {
      return call(
        request,
        'write_stdin',
        { session_id: exec.sessionId, action: 'wait', wait_timeout_seconds: 600 },
        `The command (${exec.sessionId}) is still running: I wait for it to exit.`,
      )
    }
    lines.push(exec ? describeExec(name, exec) : `${name} answered:\n${preview(result.content)}`)
  }
  return final(
    request,
    `${DEMO_LABEL} Done. ${lines.join('\n\n')}`,
    'The tool results are in: I report them.',
  )
}

interface ExecResult {
  sessionId: string
  running: boolean
  exitCode?: number
  output: string
  command?: string
  error?: string
}

/** The unified exec response of exec_command / write_stdin, when the content is one. */
function execResult(content: string): ExecResult | undefined {
  let value: unknown
  try {
    value = JSON.parse(content)
  } catch {
    return undefined
  }
  if (typeof value !== 'object' || value === null) return undefined
  const v = value as Record<string, unknown>
  if (typeof v.error === 'string' && typeof v.session_id !== 'string') {
    return { sessionId: '', running: false, output: '', error: v.error }
  }
  if (typeof v.session_id !== 'string' || typeof v.is_exited !== 'boolean') return undefined
  return {
    sessionId: v.session_id,
    running: !v.is_exited,
    ...(typeof v.exit_code === 'number' ? { exitCode: v.exit_code } : {}),
    output: typeof v.output === 'string' ? v.output : '',
    ...(typeof v.command === 'string' ? { command: v.command } : {}),
  }
}

function describeExec(name: string, exec: ExecResult): string {
  if (exec.error !== undefined) return `${name} was refused: ${exec.error}`
  const what = exec.command ? `\`${exec.command}\`` : name
  const status = exec.running ? 'is still running' : `exited with code ${exec.exitCode ?? '?'}`
  const output = exec.output.trim() ? `, output:\n${preview(exec.output)}` : ' with no output.'
  return `${what} ${status}${output}`
}

function reasonFor(intent: DemoIntent): string {
  switch (intent.tool) {
    case 'exec_command':
      return `The prompt asks to run a command: I call exec_command with \`${intent.args.cmd}\`.`
    case 'read_file':
      return `The prompt asks for a file: I call read_file on ${intent.args.path}.`
    case 'write_file':
      return `The prompt asks to write a file: I call write_file on ${intent.args.path}.`
    case 'apply_patch':
      return 'The prompt holds a patch: I call apply_patch with it.'
  }
}

function call(
  request: ModelRequest,
  name: string,
  args: Record<string, unknown>,
  reasoning: string,
): DemoReply {
  const made = request.messages.filter((m) => m.role === 'tool').length
  return {
    text: '',
    reasoning,
    toolCalls: [{ id: `call_demo_${made + 1}`, name, arguments: JSON.stringify(args) }],
  }
}

/** A final answer: the text, or JSON of the session's output schema when it has one. */
function final(request: ModelRequest, text: string, reasoning: string): DemoReply {
  if (request.outputSchema === undefined) return answer(text, reasoning)
  return answer(
    JSON.stringify(schemaSample(request.outputSchema)),
    `${reasoning} The session asks for JSON of its output schema: I answer with a sample of it.`,
  )
}

function answer(text: string, reasoning: string): DemoReply {
  return { text, reasoning, toolCalls: [] }
}

function summaryOf(transcript: string): string {
  const asks = [...transcript.matchAll(/\n\[user\]\n([^\n]*)/g)].map(
    (m) => `- ${preview(m[1] ?? '', 200)}`,
  )
  return [
    `${DEMO_LABEL} Summary written by the offline demo model (it lists, it does not understand).`,
    '## Goal — the user turns so far:',
    ...(asks.length ? asks : ['- (none)']),
    '## Next steps — unknown to the demo model.',
  ].join('\n')
}

function lastUserText(messages: readonly HistoryMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (message?.role === 'user') return message.content
  }
  return undefined
}

/** The first lines of a text, at most `max` characters. */
function preview(text: string, max = 1200): string {
  const lines = text.split('\n').slice(0, 20).join('\n')
  return lines.length > max ? `${lines.slice(0, max)}…` : lines
}
