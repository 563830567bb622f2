import type { ExecStartBody } from '../../src/contract/runner-requests.ts'
import type { ExecSession } from './exec-session.ts'
import { Refusal } from './refusal.ts'

/** A request id names one command: a retry with another command is a conflict. */
export function sameCommand(session: ExecSession, body: ExecStartBody): void {
  if (session.info.command !== body.cmd) {
    throw new Refusal(
      'conflict',
      `request ${body.request_id} already started a different command in ${session.info.id}`,
      { exec_session_id: session.info.id },
    )
  }
}
