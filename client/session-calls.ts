import {
  CreateSessionResponseSchema,
  DeliveryListSchema,
  ForkResponseSchema,
  SessionListSchema,
  SessionViewSchema,
  TurnListSchema,
  WorkspaceListSchema,
} from '../src/contract/wire-responses.ts'
import type {
  CallOptions,
  ForkRequest,
  ListSessionsQuery,
  SessionConfigInput,
  TurnsQuery,
} from './requests.ts'
import type { Transport } from './transport.ts'
import type {
  CreatedSession,
  DeliveryList,
  ForkedSession,
  SessionList,
  SessionSummary,
  SessionView,
  TurnList,
  WorkspaceList,
} from './types.ts'

/** The path of a session's route: `/v1/sessions/<id><rest>`. */
export const sessionPath = (id: string, rest = '') =>
  `/v1/sessions/${encodeURIComponent(id)}${rest}`

/**
 * Sessions as things a tenant has: create, read, list, fork and delete them, and the
 * workspaces that hold them. The base of {@link TurnlineClient}.
 */
export class SessionCalls {
  constructor(readonly transport: Transport) {}

  /** `POST /v1/sessions`: a new session (its `thread.started` is committed). */
  createSession(
    config: SessionConfigInput = {},
    options: CallOptions = {},
  ): Promise<CreatedSession> {
    return this.transport.json('POST', '/v1/sessions', CreateSessionResponseSchema, {
      body: config,
      signal: options.signal,
    })
  }

  /** `GET /v1/sessions/:id`: summary, usage, settings and budget. */
  getSession(id: string, options: CallOptions = {}): Promise<SessionView> {
    return this.transport.json('GET', sessionPath(id), SessionViewSchema, options)
  }

  /** `GET /v1/sessions`: a page of a workspace's sessions by last activity, latest first unless `order: 'oldest'`. */
  listSessions(query: ListSessionsQuery = {}, options: CallOptions = {}): Promise<SessionList> {
    return this.transport.json('GET', '/v1/sessions', SessionListSchema, {
      query: { ...query },
      signal: options.signal,
    })
  }

  /** `GET /v1/workspaces`: the tenant's workspaces with their numbers of sessions. */
  listWorkspaces(options: CallOptions = {}): Promise<WorkspaceList> {
    return this.transport.json('GET', '/v1/workspaces', WorkspaceListSchema, options)
  }

  /** `GET …/turns`: a page of the session's turns, each with what it was asked. */
  listTurns(id: string, query: TurnsQuery = {}, options: CallOptions = {}): Promise<TurnList> {
    return this.transport.json('GET', sessionPath(id, '/turns'), TurnListSchema, {
      query: { ...query },
      signal: options.signal,
    })
  }

  /** Every session of a workspace, page after page. */
  async *sessions(
    query: Omit<ListSessionsQuery, 'cursor'> = {},
    options: CallOptions = {},
  ): AsyncGenerator<SessionSummary, void, undefined> {
    let cursor: string | undefined
    do {
      const page = await this.listSessions({ ...query, ...(cursor ? { cursor } : {}) }, options)
      yield* page.sessions
      cursor = page.cursor
    } while (cursor)
  }

  /** `POST …/fork`: a new session seeded with this one's summarized history. */
  fork(id: string, request: ForkRequest = {}, options: CallOptions = {}): Promise<ForkedSession> {
    return this.transport.json('POST', sessionPath(id, '/fork'), ForkResponseSchema, {
      body: request,
      signal: options.signal,
    })
  }

  /**
   * `DELETE /v1/sessions/:id`: erases the session and everything of it (204). A running turn
   * makes the server refuse with 409 `session_busy` (TurnlineApiError): cancel it, or wait.
   */
  async deleteSession(id: string, options: CallOptions = {}): Promise<void> {
    const response = await this.transport.send('DELETE', sessionPath(id), options)
    await response.body?.cancel()
  }

  /**
   * `DELETE /v1/workspaces/:workspace`: erases every session and artifact of the workspace
   * (204). A session whose turn runs is left: 409 `session_busy`, and a later call finishes.
   */
  async deleteWorkspace(workspace: string, options: CallOptions = {}): Promise<void> {
    const path = `/v1/workspaces/${encodeURIComponent(workspace)}`
    const response = await this.transport.send('DELETE', path, options)
    await response.body?.cancel()
  }

  /** `GET /v1/sessions/:id/deliveries`: its completion-callback notices, with every attempt. */
  listDeliveries(id: string, options: CallOptions = {}): Promise<DeliveryList> {
    return this.transport.json('GET', sessionPath(id, '/deliveries'), DeliveryListSchema, options)
  }
}
