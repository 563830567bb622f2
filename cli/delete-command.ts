import { oneSession, parseSessionCommand } from './command-args.ts'
import { connect } from './connection.ts'
import { EXIT, type ExitCode } from './exit-codes.ts'
import type { Io } from './io.ts'
import { terminalSafe } from './terminal-text.ts'
import { DELETE_USAGE } from './usage.ts'

/**
 * `turnline delete SESSION`: erases the session and everything of it (`DELETE
 * /v1/sessions/:id`). A running turn makes the server refuse (409, exit 7): cancel it first.
 */
export async function deleteCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseSessionCommand('delete', argv, {})
  if (values.help) {
    io.stdout.write(DELETE_USAGE)
    return EXIT.success
  }
  const sessionId = oneSession('delete', positionals)
  const connection = await connect({ url: values.url, apiKey: values['api-key'] }, io.env)
  try {
    await connection.client.deleteSession(sessionId)
    io.stderr.write(`deleted ${terminalSafe(sessionId)}\n`)
    return EXIT.success
  } finally {
    await connection.close()
  }
}
