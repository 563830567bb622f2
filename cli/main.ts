import { readFileSync } from 'node:fs'
import { eventsCommand } from './events-command.ts'
import { execCommand } from './exec-command.ts'
import { CliError, EXIT, type ExitCode } from './exit-codes.ts'
import type { Io } from './io.ts'
import { sessionsCommand } from './sessions-command.ts'
import { ApiError, ConnectionError } from './turnline-client.ts'
import { MAIN_USAGE } from './usage.ts'

/** `turnline <command> …`: dispatches, and turns every failure into a message and an exit code. */
export async function main(argv: string[], io: Io): Promise<ExitCode> {
  const [command, ...rest] = argv
  try {
    switch (command) {
      case 'exec':
        return await execCommand(rest, io)
      case 'sessions':
        return await sessionsCommand(rest, io)
      case 'events':
        return await eventsCommand(rest, io)
      case '--version':
      case '-V':
        io.stdout.write(`turnline ${version()}\n`)
        return EXIT.success
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout.write(MAIN_USAGE)
        return command === undefined ? EXIT.usage : EXIT.success
      default:
        io.stderr.write(`turnline: unknown command ${JSON.stringify(command)}\n\n${MAIN_USAGE}`)
        return EXIT.usage
    }
  } catch (error) {
    io.stderr.write(`${messageOf(error)}\n`)
    return error instanceof CliError ? error.exitCode : EXIT.unavailable
  }
}

function messageOf(error: unknown): string {
  if (error instanceof CliError) return error.message
  if (error instanceof ApiError)
    return `turnline: the server answered ${error.status} ${error.code}: ${error.message}`
  if (error instanceof ConnectionError) return `turnline: ${error.message}`
  if (error instanceof Error) return `turnline: ${error.message}`
  return `turnline: ${String(error)}`
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: string
  }
  return pkg.version ?? 'unknown'
}

// Run as the `turnline` binary (through cli/turnline.mjs).
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
})
// Let stdout drain (a pipe may be slow), then exit with the outcome.
process.stdout.write('', () => process.exit(code))
