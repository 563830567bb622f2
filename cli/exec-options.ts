import { parseArgs } from 'node:util'
import { CliError, EXIT } from './exit-codes.ts'

export interface ExecOptions {
  json: boolean
  events?: string
  lastMessageFile?: string
  outputSchema?: string
  maxTurns?: number
  maxBudgetUsd?: number
  /** `--busy-timeout SECONDS`: how long a step waits on a session another request keeps busy. */
  busyTimeoutMs?: number
  model?: string
  workspace?: string
  /** `--cd DIR` / `-C DIR`: the folder the agent works in (embedded engine; default: the current one). */
  cd?: string
  keepOpen: boolean
  url?: string
  apiKey?: string
  help: boolean
  /** `exec resume …` */
  resume?: { session?: string; last: boolean }
  /** The PROMPT argument (`-` = stdin), if given. */
  prompt?: string
}

/** Reads `turnline exec [options] [PROMPT|-]` and `turnline exec resume [--last] [SESSION] [PROMPT|-]`. */
export function parseExecOptions(argv: string[]): ExecOptions {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    throw new CliError(`turnline exec: ${(error as Error).message}`, EXIT.usage)
  }
  const { values, positionals } = parsed
  const options: ExecOptions = {
    json: values.json === true,
    keepOpen: values['keep-open'] === true,
    help: values.help === true,
    ...optional('events', values.events),
    ...optional('lastMessageFile', values['last-message-file'] ?? values['output-last-message']),
    ...optional('outputSchema', values['output-schema']),
    ...optional('model', values.model),
    ...optional('workspace', values.workspace),
    ...optional('cd', values.cd),
    ...optional('url', values.url),
    ...optional('apiKey', values['api-key']),
  }
  if (values['max-turns'] !== undefined) {
    options.maxTurns = wholeNumber('--max-turns', values['max-turns'])
  }
  if (values['max-budget-usd'] !== undefined) {
    options.maxBudgetUsd = positiveNumber('--max-budget-usd', values['max-budget-usd'])
  }
  if (values['busy-timeout'] !== undefined) {
    options.busyTimeoutMs = seconds('--busy-timeout', values['busy-timeout'])
  }
  const args = [...positionals]
  if (args[0] === 'resume') {
    args.shift()
    const last = values.last === true
    // With --last the one argument is the prompt (as codex and vtcode read it).
    const session = last ? undefined : args.shift()
    if (!last && session === undefined && !options.help) {
      throw new CliError('turnline exec resume: give a SESSION id, or --last', EXIT.usage)
    }
    options.resume = { last, ...(session === undefined ? {} : { session }) }
    // --workspace picks where --last looks; for a named session it means nothing. The limits
    // apply to the resumed session (exec-command.ts); the other settings are fixed at creation.
    const settings = ['model', 'outputSchema'] as const
    const fixed = [...settings, ...(last ? [] : (['workspace'] as const))].filter(
      (key) => options[key] !== undefined,
    )
    if (fixed.length > 0) {
      throw new CliError(
        `turnline exec resume: ${fixed.map(flagOf).join(', ')} only apply to a new session (a session keeps the model and output schema it was created with; --max-turns and --max-budget-usd do apply)`,
        EXIT.usage,
      )
    }
  } else if (values.last === true) {
    throw new CliError('turnline exec: --last belongs to `exec resume`', EXIT.usage)
  }
  if (args.length > 1) {
    throw new CliError(
      `turnline exec: one PROMPT argument expected, got ${args.length} (quote the prompt)`,
      EXIT.usage,
    )
  }
  if (args[0] !== undefined) options.prompt = args[0]
  return options
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean' },
      events: { type: 'string' },
      'last-message-file': { type: 'string', short: 'o' },
      'output-last-message': { type: 'string' },
      'output-schema': { type: 'string' },
      'max-turns': { type: 'string' },
      'max-budget-usd': { type: 'string' },
      'busy-timeout': { type: 'string' },
      model: { type: 'string', short: 'm' },
      workspace: { type: 'string' },
      cd: { type: 'string', short: 'C' },
      'keep-open': { type: 'boolean' },
      last: { type: 'boolean' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

function optional<K extends string>(key: K, value: string | boolean | undefined) {
  return typeof value === 'string' ? ({ [key]: value } as Record<K, string>) : {}
}

function wholeNumber(flag: string, text: string): number {
  const value = Number(text)
  if (!/^\d+$/.test(text.trim()) || value < 1 || value > 100_000) {
    throw new CliError(
      `turnline exec: ${flag}: a whole number from 1 to 100000, not ${text}`,
      EXIT.usage,
    )
  }
  return value
}

function positiveNumber(flag: string, text: string): number {
  const value = Number(text)
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw new CliError(
      `turnline exec: ${flag}: a positive number of US dollars, not ${text}`,
      EXIT.usage,
    )
  }
  return value
}

/** Seconds, 0 (do not wait) to a day, as milliseconds. */
function seconds(flag: string, text: string): number {
  const value = Number(text)
  if (text.trim() === '' || !Number.isFinite(value) || value < 0 || value > 86_400) {
    throw new CliError(`turnline exec: ${flag}: seconds from 0 to 86400, not ${text}`, EXIT.usage)
  }
  return Math.round(value * 1000)
}

function flagOf(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`
}
