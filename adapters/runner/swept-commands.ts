import { createHash } from 'node:crypto'
import { appendFile, readFile, unlink } from 'node:fs/promises'
import path from 'node:path'
import * as z from 'zod'
import type { ExecStartBody } from '../../src/contract/runner-requests.ts'
import type { ExecRecord } from './exec-record.ts'
import type { ExecStateFolder } from './exec-state-folder.ts'
import { Refusal } from './refusal.ts'

/** One line of `swept.jsonl`: a start whose command was swept, and which command it was. */
const SweptLineSchema = z.object({
  request_id: z.string(),
  exec_session_id: z.string(),
  command_sha256: z.string(),
})

const sweptFile = (state: ExecStateFolder) => path.join(state.dir, 'swept.jsonl')
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * Removes what the runner kept of a command whose private spool is swept (private-spool-sweep.ts):
 * its claim (`requests/<request_id>.json`), its record (`exec/<id>.json`), then its spool. The
 * claim is what makes a start run once, so its request id and a digest of its command are first
 * appended to the workspace's `swept.jsonl` (one short line per swept command, in place of two
 * files), which a start that finds no claim reads (`refuseSwept`). A removal cut short (a crash)
 * leaves the spool, so the next pass removes the rest (a spool left without its record waits
 * another grace, as any spool without a record does).
 */
export async function removeSwept(
  state: ExecStateFolder,
  id: string,
  record: ExecRecord | undefined,
): Promise<void> {
  if (record) {
    const line = {
      request_id: record.request_id,
      exec_session_id: id,
      command_sha256: sha256(record.command),
    }
    // On a line of its own even after a line a crash cut short.
    await appendFile(sweptFile(state), `\n${JSON.stringify(line)}\n`)
    const claim = state.claimFile(record.request_id)
    if ((await state.claimed(claim).catch(() => undefined)) === id) await removed(claim)
    await removed(state.recordFile(id))
  }
  await removed(state.privateSpoolFile(`write_stdin_${id}.txt`))
}

/**
 * A start that found no claim: if its request id names a swept command, it ran once already and
 * its output is gone, so it is refused `not_found` (as a read of that command is), or `conflict`
 * for another command under the same id, instead of running again.
 */
export async function refuseSwept(state: ExecStateFolder, body: ExecStartBody): Promise<void> {
  // Only private spools are swept: another start has nothing to look up.
  if (body.private_output !== true) return
  const text = await readFile(sweptFile(state), 'utf8').catch(() => '')
  if (!text.includes(JSON.stringify(body.request_id))) return
  for (const line of text.split('\n')) {
    const swept = parsedLine(line)
    if (swept?.request_id !== body.request_id) continue
    const id = swept.exec_session_id
    if (swept.command_sha256 !== sha256(body.cmd)) {
      throw new Refusal(
        'conflict',
        `request ${body.request_id} already started a different command in ${id}`,
        { exec_session_id: id },
      )
    }
    throw new Refusal(
      'not_found',
      `request ${body.request_id} already ran as ${id}, whose output was swept; it is not run again`,
      { exec_session_id: id },
    )
  }
}

function parsedLine(line: string): z.infer<typeof SweptLineSchema> | undefined {
  try {
    return SweptLineSchema.parse(JSON.parse(line))
  } catch {
    return undefined
  }
}

async function removed(file: string): Promise<void> {
  try {
    await unlink(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}
