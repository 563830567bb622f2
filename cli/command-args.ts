import { type ParseArgsConfig, parseArgs } from 'node:util'
import { CliError, EXIT } from './exit-codes.ts'

/** A command's parsed arguments, or a usage error (exit 2) naming the command. */
export function parsedOrUsage<R>(command: string, parse: () => R): R {
  try {
    return parse()
  } catch (error) {
    throw new CliError(`turnline ${command}: ${(error as Error).message}`, EXIT.usage)
  }
}

/** The one SESSION argument of a command, or a usage error. */
export function oneSession(command: string, positionals: readonly string[]): string {
  const [sessionId, ...extra] = positionals
  if (sessionId === undefined || extra.length > 0) {
    throw new CliError(`turnline ${command}: give exactly one SESSION id`, EXIT.usage)
  }
  return sessionId
}

/** The options every command that reaches a session has: where it runs, and its help. */
const SESSION_COMMAND_OPTIONS = {
  url: { type: 'string' },
  'api-key': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

/**
 * The arguments of a command that reaches a session (`events`, `delete`, `artifact`): its own
 * `options` and the common ones, positionals allowed, strict; a usage error names the command.
 */
export function parseSessionCommand<const O extends NonNullable<ParseArgsConfig['options']>>(
  command: string,
  argv: string[],
  options: O,
) {
  return parsedOrUsage(command, () =>
    parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: { ...options, ...SESSION_COMMAND_OPTIONS },
    }),
  )
}
