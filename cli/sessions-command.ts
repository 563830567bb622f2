import { parseArgs } from 'node:util'
import { connect } from './connection.ts'
import { CliError, EXIT, type ExitCode } from './exit-codes.ts'
import type { Io } from './io.ts'
import { stdoutData, terminalSafe } from './terminal-text.ts'
import { SESSIONS_USAGE } from './usage.ts'

/**
 * `turnline sessions`: one line per session, the most recently active first (or the server's
 * JSON); `--oldest` the other way, `--cursor` the next page (the command names it).
 */
export async function sessionsCommand(argv: string[], io: Io): Promise<ExitCode> {
  let values: ReturnType<typeof parse>['values']
  try {
    ;({ values } = parse(argv))
  } catch (error) {
    throw new CliError(`turnline sessions: ${(error as Error).message}`, EXIT.usage)
  }
  if (values.help) {
    io.stdout.write(SESSIONS_USAGE)
    return EXIT.success
  }
  if (values.status !== undefined && values.status !== 'active' && values.status !== 'completed') {
    throw new CliError('turnline sessions: --status is active or completed', EXIT.usage)
  }
  const limit = values.limit === undefined ? 50 : Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
    throw new CliError('turnline sessions: --limit is a whole number from 1 to 200', EXIT.usage)
  }
  const connection = await connect({ url: values.url, apiKey: values['api-key'] }, io.env)
  try {
    const page = await connection.client.listSessions({
      limit,
      order: values.oldest ? 'oldest' : 'newest',
      ...(values.cursor ? { cursor: values.cursor } : {}),
      ...(values.workspace ? { workspace: values.workspace } : {}),
      ...(values.status ? { status: values.status } : {}),
    })
    if (values.json) {
      io.stdout.write(stdoutData(io.stdout)(`${JSON.stringify(page)}\n`))
      return EXIT.success
    }
    // In the server's order: the latest (or earliest) activity first, continued by the cursor.
    const rows = page.sessions.map((s) =>
      [
        s.session_id,
        [s.status, s.turn_state ?? s.activity_state].filter(Boolean).join('/'),
        String(s.turn_count),
        String(s.event_count),
        s.last_activity_at ?? s.updated_at,
        shortTitle(s.title),
      ].map(terminalSafe),
    )
    if (rows.length === 0) {
      io.stderr.write(`no sessions in workspace ${terminalSafe(values.workspace ?? 'default')}\n`)
      return EXIT.success
    }
    io.stdout.write(
      table([['SESSION', 'STATUS', 'TURNS', 'EVENTS', 'LAST ACTIVITY', 'TITLE'], ...rows]),
    )
    if (page.cursor) {
      const oldest = values.oldest ? ' --oldest' : ''
      io.stderr.write(`(more sessions: turnline sessions${oldest} --cursor ${page.cursor})\n`)
    }
    return EXIT.success
  } finally {
    await connection.close()
  }
}

/** The title in a table cell: its first 48 characters (the API's title is up to 120). */
function shortTitle(title: string | undefined): string {
  if (title === undefined) return '-'
  const chars = Array.from(title)
  return chars.length <= 48 ? title : `${chars.slice(0, 47).join('')}…`
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      workspace: { type: 'string' },
      status: { type: 'string' },
      limit: { type: 'string' },
      cursor: { type: 'string' },
      oldest: { type: 'boolean' },
      json: { type: 'boolean' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? []
  return rows
    .map((row) =>
      row.map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i] ?? 0) : cell)).join('  '),
    )
    .join('\n')
    .concat('\n')
}
