import type * as z from 'zod'
import {
  ApplyPatchBodySchema,
  ExecCloseBodySchema,
  ExecPollBodySchema,
  ExecStartBodySchema,
  ExecWaitBodySchema,
  ExecWriteBodySchema,
  FileReadBodySchema,
  FileWriteBodySchema,
  GitLogBodySchema,
  SpoolReadBodySchema,
  WorktreeBodySchema,
} from '../../src/contract/runner-requests.ts'
import { captureBody } from './capture-body.ts'
import type { ExecRegistry, Scope } from './exec-registry.ts'
import { applyWorkspacePatch, readWorkspaceFile, writeWorkspaceFile } from './file-ops.ts'
import { recentLog } from './git-recent-log.ts'
import type { TenantLimitEnforcer } from './tenant-limit-enforcer.ts'
import { createWorktree } from './worktree.ts'

/** One POST route: its body schema and what it answers (a JSON body, status 200). */
export interface Route<S extends z.ZodType = z.ZodType> {
  schema: S
  handle(scope: Scope, body: z.output<S>, startedAt: number): Promise<unknown>
}

function route<S extends z.ZodType>(
  schema: S,
  handle: (scope: Scope, body: z.output<S>, startedAt: number) => Promise<unknown>,
): Route {
  return { schema, handle } as Route
}

export function runnerRoutes(
  registry: ExecRegistry,
  limits: TenantLimitEnforcer,
): ReadonlyMap<string, Route> {
  return new Map<string, Route>([
    [
      '/v1/exec/start',
      route(ExecStartBodySchema, async (scope, body, startedAt) => {
        const { session, attached } = await registry.start(scope, body)
        await session.waitExit(body.yield_time_ms)
        const output = session.capture(body.max_output_bytes, attached ? 0 : undefined)
        return captureBody(session, output, { attached, wallTimeMs: Date.now() - startedAt })
      }),
    ],
    [
      '/v1/exec/write',
      route(ExecWriteBodySchema, async (scope, body, startedAt) => {
        const session = await registry.get(scope, body.exec_session_id)
        session.write(body.chars)
        await session.waitExit(body.yield_time_ms)
        const output = session.capture(body.max_output_bytes)
        return captureBody(session, output, { attached: false, wallTimeMs: Date.now() - startedAt })
      }),
    ],
    [
      '/v1/exec/poll',
      route(ExecPollBodySchema, async (scope, body, startedAt) => {
        const session = await registry.get(scope, body.exec_session_id)
        await session.waitExit(body.yield_time_ms)
        const output = session.capture(body.max_output_bytes, body.since)
        return captureBody(session, output, { attached: false, wallTimeMs: Date.now() - startedAt })
      }),
    ],
    [
      '/v1/exec/wait',
      route(ExecWaitBodySchema, async (scope, body, startedAt) => {
        const session = await registry.get(scope, body.exec_session_id)
        const exited = await session.waitExit(body.timeout_ms)
        const output = session.capture(body.max_output_bytes, body.since)
        const elapsed = Date.now() - startedAt
        return captureBody(session, output, {
          attached: false,
          wallTimeMs: elapsed,
          waitedMs: elapsed,
          timedOut: !exited,
        })
      }),
    ],
    [
      '/v1/exec/close',
      route(ExecCloseBodySchema, async (scope, body, startedAt) => {
        const session = await registry.get(scope, body.exec_session_id)
        await session.kill()
        const output = session.capture(body.max_output_bytes)
        registry.closed(scope, session)
        return captureBody(session, output, { attached: false, wallTimeMs: Date.now() - startedAt })
      }),
    ],
    [
      '/v1/exec/read-spool',
      route(SpoolReadBodySchema, async (scope, body) => {
        const session = await registry.get(scope, body.exec_session_id)
        const total = session.total
        const size = Math.max(0, Math.min(body.length, total - body.offset))
        const bytes = size > 0 ? session.spool.read(body.offset, size) : Buffer.alloc(0)
        const got = bytes.byteLength
        return {
          offset: body.offset,
          data_base64: bytes.toString('base64'),
          total_output_bytes: total,
          complete: session.drained,
          eof: session.drained && body.offset + got >= total,
        }
      }),
    ],
    [
      '/v1/files/read',
      route(FileReadBodySchema, async (scope, body) => readWorkspaceFile(scope.workspace, body)),
    ],
    [
      '/v1/files/write',
      route(FileWriteBodySchema, async (scope, body) => {
        const bytes = Buffer.byteLength(body.content)
        await limits.admitWrite(scope.tenant, scope.sandbox, bytes)
        return writeWorkspaceFile(scope.workspace, body.path, body.content, scope.sandbox.fileOwner)
      }),
    ],
    [
      '/v1/files/apply-patch',
      route(ApplyPatchBodySchema, async (scope, body) => {
        await limits.admitWrite(scope.tenant, scope.sandbox, Buffer.byteLength(body.patch))
        return applyWorkspacePatch(scope.workspace, body.patch, scope.sandbox.fileOwner)
      }),
    ],
    [
      '/v1/git/recent-log',
      route(GitLogBodySchema, async (scope, body) =>
        recentLog(scope.tenant, scope.workspace, scope.sandbox, body.count),
      ),
    ],
    [
      '/v1/worktrees',
      route(WorktreeBodySchema, (scope, body) =>
        createWorktree(scope.sandbox, scope.workspace, body.name, body.ref),
      ),
    ],
  ])
}
