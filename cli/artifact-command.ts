import { createWriteStream } from 'node:fs'
import { Writable } from 'node:stream'
import type { ByteRange, OutputArtifactsClient } from '../client/output-artifacts-client.ts'
import type { KeptOutputList } from '../client/types.ts'
import { parseSessionCommand } from './command-args.ts'
import { connect } from './connection.ts'
import { CliError, EXIT, type ExitCode } from './exit-codes.ts'
import type { Io } from './io.ts'
import { stdoutData } from './terminal-text.ts'
import { ARTIFACT_USAGE } from './usage.ts'

/**
 * `turnline artifact SESSION [OUTPUT]`: without OUTPUT, lists the tool outputs and hook answers
 * the session kept whole (`GET …/artifacts`), one a line; with it, a kept output — named by its artifact id
 * (`out_…`, as its preview names it) or by the call that made it (the model's call id, the
 * `tool_invocation` item or its `tool_output` item, as the listing gives them) — streamed to
 * `--output FILE` byte for byte, else to stdout as text (terminal-safe on a terminal).
 * `--range START-END` reads one byte range (END inclusive, as in HTTP; `START-` to the end).
 */
export async function artifactCommand(argv: string[], io: Io): Promise<ExitCode> {
  const { values, positionals } = parseSessionCommand('artifact', argv, {
    range: { type: 'string' },
    output: { type: 'string', short: 'o' },
  })
  if (values.help) {
    io.stdout.write(ARTIFACT_USAGE)
    return EXIT.success
  }
  const [sessionId, named, ...extra] = positionals
  if (sessionId === undefined || extra.length > 0) {
    throw new CliError('turnline artifact: give a SESSION id and at most one OUTPUT', EXIT.usage)
  }
  const range = values.range === undefined ? undefined : rangeOf(values.range)
  const connection = await connect({ url: values.url, apiKey: values['api-key'] }, io.env)
  try {
    const outputs = connection.client.outputs
    if (named === undefined) {
      // Tool names and call ids are the model's text: made terminal-safe like any other.
      const toStdout = stdoutData(io.stdout)
      for await (const kept of outputs.all(sessionId))
        io.stdout.write(toStdout(`${listLine(kept)}\n`))
      return EXIT.success
    }
    const artifactId = ARTIFACT_ID.test(named) ? named : await byCall(outputs, sessionId, named)
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

const ARTIFACT_ID = /^out_[0-9a-f]{32}$/

type Kept = KeptOutputList['outputs'][number]

/**
 * One kept output as a line: its id, sizes, then a tool output's tool and the ids of its call,
 * or a hook answer's `hook <event> <hook>` and the model's call id it ran for (if any).
 */
function listLine(kept: Kept): string {
  const sizes = `${kept.artifact_id}\t${kept.size} bytes\t${kept.lines} lines`
  if (kept.kind === 'hook_answer') {
    return `${sizes}\thook ${kept.event} ${kept.hook}\t${kept.tool_call_id ?? ''}`
  }
  const call = [kept.tool_call_id, kept.item_id].filter((id) => id !== undefined).join(' ')
  return `${sizes}\t${kept.tool_name ?? '-'}\t${call}`
}

/** The artifact of the output a call made, found in the listing; a usage error when none. */
async function byCall(
  outputs: OutputArtifactsClient,
  sessionId: string,
  call: string,
): Promise<string> {
  for await (const kept of outputs.all(sessionId)) {
    if (kept.kind !== 'tool_output') continue
    if ([kept.tool_call_id, kept.call_id, kept.item_id].includes(call)) return kept.artifact_id
  }
  throw new CliError(
    `turnline artifact: no kept output of call ${call} in session ${sessionId} (turnline artifact ${sessionId} lists them)`,
    EXIT.usage,
  )
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
