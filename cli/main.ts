import { readFileSync } from 'node:fs'
import {
  TurnlineApiError,
  TurnlineConnectionError,
  TurnlineProtocolError,
} from '../client/errors.ts'
import { artifactCommand } from './artifact-command.ts'
import { deleteCommand } from './delete-command.ts'
import { eventsCommand } from './events-command.ts'
import { execCommand } from './exec-command.ts'
import { CliError, EXIT, type ExitCode } from './exit-codes.ts'
import type { Io } from './io.ts'
import { sessionsCommand } from './sessions-command.ts'
import { terminalSafe } from './terminal-text.ts'
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
      case 'delete':
        return await deleteCommand(rest, io)
      case 'artifact':
        return await artifactCommand(rest, io)
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
        io.stderr.write(
          `turnline: unknown command ${terminalSafe(JSON.stringify(command))}\n\n${MAIN_USAGE}`,
        )
        return EXIT.usage
    }
  } catch (error) {
    // Messages echo a server's text (and what the command line gave): terminal-safe.
    io.stderr.write(`${terminalSafe(messageOf(error))}\n`)
    return error instanceof CliError ? error.exitCode : EXIT.unavailable
  }
}

function messageOf(error: unknown): string {
  if (error instanceof CliError) return error.message
  if (error instanceof TurnlineApiError && error.status === 401) {
    return (
      `turnline: the server answered 401 ${error.code}: ${error.message} — give its API key ` +
      'with --api-key KEY or the environment variable TURNLINE_API_KEY'
    )
  }
  if (error instanceof TurnlineApiError)
    return `turnline: the server answered ${error.status} ${error.code}: ${error.message}`
  if (error instanceof TurnlineConnectionError) return `turnline: ${error.message}`
  if (error instanceof TurnlineProtocolError) return `turnline: ${error.message}`
  if (error instanceof Error) return `turnline: ${error.message}`
  return `turnline: ${String(error)}`
}

/** The package's version: the nearest package.json named turnline (sources or dist/cli/). */
function version(): string {
  let dir = new URL('./', import.meta.url)
  for (let depth = 0; depth < 4; depth++) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as {
        name?: string
        version?: string
      }
      if (pkg.name === 'turnline' && pkg.version) return pkg.version
    } catch {
      // no package.json here: look one folder up
    }
    dir = new URL('../', dir)
  }
  return 'unknown'
}

// Run as the `turnline` binary (through cli/turnline.mjs).
// A reader that goes away (`turnline exec --json … | head -1`) is not an error of the run.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error
})
const code = await main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
})
// Let stdout drain (a pipe may be slow), then exit with the outcome.
process.stdout.write('', () => process.exit(code))
