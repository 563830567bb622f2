import { createWriteStream } from 'node:fs'
import { Writable } from 'node:stream'
import { parseArgs } from 'node:util'
import type { ByteRange } from '../client/output-artifacts-client.ts'
import { parsedOrUsage, SESSION_COMMAND_OPTIONS } from './command-args.ts'
import { connect } from './connection.ts'
import { CliError, EXIT, type ExitCode } from './exit-codes.ts'
import type { Io } from './io.ts'
import { stdoutData } from './terminal-text.ts'
import { ARTIFACT_USAGE } from './usage.ts'

/**
 * `turnline artifact SESSION ARTIFACT_ID`: a tool output the session kept whole (its preview
 * names `out_…`), streamed — to `--output FILE` byte for byte, else to stdout as text
 * (terminal-safe on a terminal). `--range START-END` reads one byte range (END inclusive, as in
 * HTTP; `START-` to the end).
 */
export async function artifactCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parsedOrUsage('artifact', () => parse(argv))
  if (values.help) {
    io.stdout.write(ARTIFACT_USAGE)
    return EXIT.success
  }
  const [sessionId, artifactId, ...extra] = positionals
  if (sessionId === undefined || artifactId === undefined || extra.length > 0) {
    throw new CliError('turnline artifact: give a SESSION id and an ARTIFACT_ID', EXIT.usage)
  }
  const range = values.range === undefined ? undefined : rangeOf(values.range)
  const connection = await connect({ url: values.url, apiKey: values['api-key'] }, io.env)
  try {
    const opened = await connection.client.outputs.open(sessionId, artifactId, {
      ...(range ? { range } : {}),
    })
    if (values.output !== undefined) {
      await opened.body.pipeTo(Writable.toWeb(createWriteStream(values.output)))
      io.stderr.write(`wrote ${opened.end - opened.start} of ${opened.size} bytes\n`)
      return EXIT.success
    }
    const toStdout = stdoutData(io.stdout)
    const decoder = new TextDecoder()
    const reader = opened.body.getReader()
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      io.stdout.write(toStdout(decoder.decode(next.value, { stream: true })))
    }
    io.stdout.write(toStdout(decoder.decode()))
    return EXIT.success
  } finally {
    await connection.close()
  }
}

/** `START-END` (inclusive) or `START-`. */
function rangeOf(text: string): ByteRange {
  const match = /^(\d{1,15})-(\d{1,15})?$/.exec(text)
  const start = Number(match?.[1])
  const end = match?.[2] === undefined ? undefined : Number(match[2]) + 1
  if (!match || (end !== undefined && end <= start)) {
    throw new CliError('turnline artifact: --range is START-END or START- (bytes)', EXIT.usage)
  }
  return end === undefined ? { start } : { start, end }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      range: { type: 'string' },
      output: { type: 'string', short: 'o' },
      ...SESSION_COMMAND_OPTIONS,
    },
  })
}
