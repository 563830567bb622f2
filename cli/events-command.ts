import type { SeqEvent } from '../client/types.ts'
import { serializeEvent } from '../src/contract/serialize.ts'
import { oneSession, parseSessionCommand } from './command-args.ts'
import { connect } from './connection.ts'
import { CliError, EXIT, type ExitCode } from './exit-codes.ts'
import { type Io, useColor } from './io.ts'
import { Progress } from './progress.ts'
import { recallEvents } from './run-output.ts'
import { stdoutData } from './terminal-text.ts'
import { EVENTS_USAGE } from './usage.ts'

/**
 * `turnline events SESSION`: the session's events, readable (the progress view, on stdout) or as
 * bare ThreadEvent lines (`--json`: byte-exact to a pipe, terminal-safe to a terminal, like the
 * readable view always is). `--follow` stays on the live feed until `thread.completed`,
 * reconnecting after the server's follow limit.
 */
export async function eventsCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseSessionCommand('events', argv, {
    after: { type: 'string' },
    follow: { type: 'boolean', short: 'f' },
    json: { type: 'boolean' },
  })
  if (values.help) {
    io.stdout.write(EVENTS_USAGE)
    return EXIT.success
  }
  const sessionId = oneSession('events', positionals)
  let after = -1
  if (values.after !== undefined) {
    after = Number(values.after)
    if (!Number.isInteger(after) || after < -1) {
      throw new CliError('turnline events: --after is a seq (a whole number, or -1)', EXIT.usage)
    }
  }
  const connection = await connect({ url: values.url, apiKey: values['api-key'] }, io.env)
  const view = values.json
    ? undefined
    : new Progress(
        { write: (t) => io.stdout.write(t) },
        { color: useColor({ ...io, stderr: io.stdout }), timings: false },
      )
  const toStdout = stdoutData(io.stdout)
  let last = after
  const show = ({ seq, event }: SeqEvent) => {
    if (seq <= last) return
    last = seq
    if (view) view.event(event)
    else io.stdout.write(toStdout(`${serializeEvent(event)}\n`))
  }
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.on('SIGINT', onSignal)
  try {
    // Shown from after SEQ: the view first learns the tool calls before it (never shown).
    if (view && after >= 0) {
      await recallEvents(connection.client, sessionId, after, (event) => view.learn(event))
    }
    // Without --follow, every committed event; with it, the live feed until thread.completed,
    // reconnecting (Last-Event-ID) after the server's follow limit or a dropped connection.
    const feed = connection.client.events(sessionId, {
      after,
      follow: values.follow === true,
      signal: stop.signal,
    })
    try {
      for await (const item of feed) show(item)
    } catch (error) {
      if (!stop.signal.aborted) throw error
    }
    return EXIT.success
  } finally {
    process.off('SIGINT', onSignal)
    view?.close()
    await connection.close()
  }
}
