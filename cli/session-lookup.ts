import type { TurnlineClient } from '../client/turnline-client.ts'
import type { SessionSummary } from '../client/types.ts'
import { CliError, EXIT } from './exit-codes.ts'

/** Every session of a workspace, page by page (the server pages by 200). */
export async function allSessions(
  client: TurnlineClient,
  query: { workspace?: string | undefined; status?: 'active' | 'completed' | undefined },
): Promise<SessionSummary[]> {
  const sessions: SessionSummary[] = []
  const listed = client.sessions({
    limit: 200,
    ...(query.workspace ? { workspace: query.workspace } : {}),
    ...(query.status ? { status: query.status } : {}),
  })
  for await (const summary of listed) sessions.push(summary)
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
