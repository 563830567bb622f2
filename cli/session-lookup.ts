import type { SessionSummary } from './api-answers.ts'
import { CliError, EXIT } from './exit-codes.ts'
import type { TurnlineClient } from './turnline-client.ts'

/** Every session of a workspace, page by page (the server pages by 200). */
export async function allSessions(
  client: TurnlineClient,
  query: { workspace?: string | undefined; status?: string | undefined },
): Promise<SessionSummary[]> {
  const sessions: SessionSummary[] = []
  let cursor: string | undefined
  do {
    const page = await client.listSessions({
      limit: '200',
      ...(query.workspace ? { workspace: query.workspace } : {}),
      ...(query.status ? { status: query.status } : {}),
      ...(cursor ? { cursor } : {}),
    })
    sessions.push(...page.sessions)
    cursor = page.cursor
  } while (cursor)
  return sessions
}

/** The most recently updated session of the workspace (`exec resume --last`). */
export async function newestSession(
  client: TurnlineClient,
  workspace: string | undefined,
): Promise<SessionSummary> {
  const sessions = await allSessions(client, { workspace })
  const newest = sessions.sort((a, b) => b.updated_at.localeCompare(a.updated_at))[0]
  if (!newest) {
    throw new CliError(
      `turnline exec resume --last: no session in workspace ${workspace ?? 'default'}`,
      EXIT.usage,
    )
  }
  return newest
}
