import { closeSync, openSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import type { TurnStatus } from '../client/types.ts'
import type { LimitsChange } from '../src/contract/api.ts'
import { type Connection, connect } from './connection.ts'
import { type ExecOptions, parseExecOptions } from './exec-options.ts'
import { CliError, EXIT, type ExitCode, exitCodeOf } from './exit-codes.ts'
import { type Io, useColor } from './io.ts'
import { checkAnswer, loadOutputSchema } from './output-schema.ts'
import { Progress } from './progress.ts'
import { readPrompt } from './prompt-input.ts'
import { RunOutput } from './run-output.ts'
import { SessionDriver } from './session-driver.ts'
import { newestSession } from './session-lookup.ts'
import { stdoutData, terminalSafe } from './terminal-text.ts'
import { EXEC_USAGE } from './usage.ts'

/**
 * `turnline exec`: runs a prompt as one session to its end, like `vtcode exec` / `codex exec`.
 * Creates the session (or resumes one), steps the turn (continuing it through sandbox waits),
 * completes the session, and exits with its outcome. Events go to stdout (`--json`) and/or a
 * file (`--events`); a human view goes to stderr; the final answer to stdout when stdout is not
 * the terminal that already shows it, and to `--last-message-file`.
 */
export async function execCommand(argv: string[], io: Io): Promise<ExitCode> {
  const options = parseExecOptions(argv)
  if (options.help) {
    io.stdout.write(EXEC_USAGE)
    return EXIT.success
  }
  const prompt = await readPrompt(options.prompt, io.stdin)
  if (prompt === undefined && !options.resume) {
    throw new CliError(
      'turnline exec: no prompt: give it as an argument, or pipe it on stdin (`-` forces stdin)',
      EXIT.usage,
    )
  }
  const schema = options.outputSchema ? await loadOutputSchema(options.outputSchema) : undefined
  const eventsFd = options.events === undefined ? undefined : openEventsFile(options.events)
  let connection: Connection | undefined
  const progress = options.json ? undefined : new Progress(io.stderr, { color: useColor(io) })
  const toStdout = stdoutData(io.stdout)
  try {
    connection = await connect({ ...options, work: { cd: options.cd, cwd: process.cwd() } }, io.env)
    if (connection.workLine) io.stderr.write(`${terminalSafe(connection.workLine)}\n`)
    if (connection.demoNotice) io.stderr.write(`${terminalSafe(connection.demoNotice)}\n`)
    for (const warning of connection.warnings) {
      io.stderr.write(`turnline: WARNING: ${terminalSafe(warning)}\n`)
    }
    const { client } = connection
    const output = new RunOutput({
      client,
      json: options.json,
      ...(eventsFd === undefined ? {} : { eventsFd }),
      ...(progress ? { progress } : {}),
      writeStdout: (text) => io.stdout.write(toStdout(text)),
    })
    let interrupted = false
    const driver = new SessionDriver(
      client,
      output,
      progress,
      () => interrupted,
      options.busyTimeoutMs,
    )

    const { sessionId, lastSeq, limits } = await openSession(connection, options, schema, progress)
    output.follow(sessionId, lastSeq)
    await output.recall()
    progress?.note(`turnline exec · session ${sessionId} · ${connection.describe}`)

    let cancelling: Promise<unknown> | undefined
    const onSignal = () => {
      if (interrupted) process.exit(EXIT.interrupted)
      interrupted = true
      io.stderr.write(
        'turnline: interrupted: cancelling the session (Ctrl-C again to quit at once)\n',
      )
      cancelling = client
        .cancel(sessionId, { onEvent: (event) => output.accept(event) })
        .catch(() => {})
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    let status: TurnStatus
    try {
      status = await driver.run(sessionId, prompt, limits)
      if (interrupted) {
        await cancelling
        await driver.cancel(sessionId)
        return EXIT.interrupted
      }
      if (status === 'awaiting_approval') {
        progress?.warn(
          `the turn waits for a decision (see the events): answer it over HTTP (POST /v1/sessions/${sessionId}/permissions or /plan-approval), then run \`turnline exec resume ${sessionId}\``,
        )
      } else if (status !== 'terminal' && !options.keepOpen) {
        await driver.complete(sessionId)
      }
    } finally {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
    return await finish(output, status, options, schema, io, progress)
  } finally {
    progress?.close()
    if (eventsFd !== undefined) closeSync(eventsFd)
    await connection?.close()
  }
}

/** The largest `limits.max_turns` a session takes. */
const MAX_TURNS_LIMIT = 100_000

/**
 * A new session from the options, or the resumed one (a completed one continues in a fork).
 * `--max-turns N` and `--max-budget-usd X` count from here, for new and resumed sessions alike:
 * a fork's counts start at zero; an open session gets limits of what it used so far plus N (and
 * X), sent with its next turn (`limits` of the turn request).
 */
async function openSession(
  connection: Connection,
  options: ExecOptions,
  schema: Record<string, unknown> | undefined,
  progress: Progress | undefined,
): Promise<{ sessionId: string; lastSeq: number; limits?: LimitsChange }> {
  const { client } = connection
  const limits = {
    ...(options.maxTurns === undefined ? {} : { max_turns: options.maxTurns }),
    ...(options.maxBudgetUsd === undefined ? {} : { max_budget_usd: options.maxBudgetUsd }),
  }
  const anyLimit = Object.keys(limits).length > 0
  if (!options.resume) {
    const created = await client.createSession({
      ...(options.workspace === undefined ? {} : { workspace: options.workspace }),
      ...(options.model === undefined ? {} : { model: options.model }),
      ...(anyLimit ? { limits } : {}),
      ...(schema === undefined ? {} : { output_schema: schema }),
    })
    return { sessionId: created.session_id, lastSeq: -1 }
  }
  const id = options.resume.session ?? (await newestSession(client, options.workspace)).session_id
  const view = await client.getSession(id)
  if (view.status !== 'completed') {
    if (!anyLimit) return { sessionId: id, lastSeq: view.last_seq }
    const raised = {
      ...(options.maxTurns === undefined
        ? {}
        : { max_turns: Math.min(view.num_turns + options.maxTurns, MAX_TURNS_LIMIT) }),
      ...(options.maxBudgetUsd === undefined
        ? {}
        : { max_budget_usd: (view.total_cost_usd ?? 0) + options.maxBudgetUsd }),
    }
    return { sessionId: id, lastSeq: view.last_seq, limits: raised }
  }
  const fork = await client.fork(id, anyLimit ? { limits } : {})
  progress?.note(
    `session ${id} is completed; continuing in a fork, ${fork.session_id} (its history summarized)`,
  )
  return { sessionId: fork.session_id, lastSeq: -1 }
}

async function finish(
  output: RunOutput,
  status: TurnStatus,
  options: ExecOptions,
  schema: Record<string, unknown> | undefined,
  io: Io,
  progress: Progress | undefined,
): Promise<ExitCode> {
  const message = output.lastMessage
  if (options.lastMessageFile !== undefined) {
    await writeFile(options.lastMessageFile, message ?? '')
    if (message === undefined) {
      progress?.warn(`no final answer; wrote an empty ${options.lastMessageFile}`)
    }
  }
  // A terminal shows the answer on stderr already; pipes and files get it on stdout.
  const shown = io.stdout.isTTY === true && io.stderr.isTTY === true
  if (!options.json && !shown && message !== undefined) {
    io.stdout.write(stdoutData(io.stdout)(message.endsWith('\n') ? message : `${message}\n`))
  }
  let code: ExitCode
  if (output.completed) code = exitCodeOf(output.completed)
  else if (status === 'awaiting_approval') code = EXIT.awaiting_approval
  else code = status === 'completed' ? EXIT.success : EXIT.error_during_execution
  if (code === EXIT.success && schema) {
    const check = checkAnswer(message, schema)
    if (!check.ok) {
      io.stderr.write(`turnline: --output-schema: ${terminalSafe(check.reason)}\n`)
      return EXIT.output_schema_mismatch
    }
  }
  return code
}

function openEventsFile(path: string): number {
  try {
    return openSync(path, 'w')
  } catch (error) {
    throw new CliError(
      `turnline exec: --events: cannot write ${path}: ${(error as Error).message}`,
      EXIT.usage,
    )
  }
}
