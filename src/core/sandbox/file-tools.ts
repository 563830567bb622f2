import { type PatchOp, parsePatch } from '../../contract/patch-parser.ts'
import {
  ApplyPatchArgsSchema,
  ReadFileArgsSchema,
  WriteFileArgsSchema,
} from '../../contract/sandbox-tool-args.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { FileChange, SandboxRunner, SandboxScope } from '../../ports/sandbox-runner.ts'
import { readArgs } from './exec-tool-schemas.ts'

/** Model-facing file tools on the sandbox runner: `read_file`, `write_file`, `apply_patch`. */

export const FILE_TOOL_NAMES = ['read_file', 'write_file', 'apply_patch'] as const
export type FileToolName = (typeof FILE_TOOL_NAMES)[number]

/** Bytes of a file read_file returns at most in one call. */
const READ_MAX_BYTES = 64 * 1024

export const READ_FILE_TOOL: ToolDefinition = {
  name: 'read_file',
  description:
    'Read a text file of the workspace. Long files come in pages: pass offset (1-based line) ' +
    'and limit (lines) to read further.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
      offset: { type: 'integer', minimum: 1, description: 'First line to read (1-based).' },
      limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 2000 },
    },
    required: ['path'],
  },
}

export const WRITE_FILE_TOOL: ToolDefinition = {
  name: 'write_file',
  description: 'Create or overwrite a file of the workspace with the given content.',
  parameters: {
    type: 'object',
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
      content: { type: 'string' },
    },
    required: ['path', 'content'],
  },
}

export const APPLY_PATCH_TOOL: ToolDefinition = {
  name: 'apply_patch',
  description:
    'Edit files with a patch: "*** Begin Patch", then per file "*** Add File: <path>" (lines ' +
    'prefixed "+"), "*** Delete File: <path>", or "*** Update File: <path>" (optional ' +
    '"*** Move to: <path>") with hunks starting "@@" (optionally followed by a line to find ' +
    'first) whose lines start with " " (context), "-" (remove) or "+" (add), then ' +
    '"*** End Patch". Paths are relative. The patch applies completely or not at all.',
  parameters: {
    type: 'object',
    properties: { input: { type: 'string', description: 'The whole patch text.' } },
    required: ['input'],
  },
}

export interface FileChangeData {
  changes: FileChange[]
  status: 'completed' | 'failed'
}

export type FileToolResult =
  | {
      kind: 'done'
      ok: boolean
      /** What the model reads. */
      output: string
      /** For a `file_change` item (write_file, and apply_patch once its patch parsed). */
      fileChange?: FileChangeData
    }
  | { kind: 'invalid'; message: string }

export interface FileToolContext {
  runner: SandboxRunner
  scope: SandboxScope
}

export async function runFileTool(
  name: FileToolName,
  rawArgs: unknown,
  ctx: FileToolContext,
): Promise<FileToolResult> {
  if (name === 'read_file') return readFile(rawArgs, ctx)
  if (name === 'write_file') return writeFile(rawArgs, ctx)
  return applyPatch(rawArgs, ctx)
}

async function readFile(rawArgs: unknown, ctx: FileToolContext): Promise<FileToolResult> {
  const args = readArgs(ReadFileArgsSchema, rawArgs, 'read_file')
  if (!args.ok) return { kind: 'invalid', message: args.message }
  const { path, offset, limit } = args.value
  const result = await ctx.runner.readFile(ctx.scope, {
    path,
    startLine: offset ?? 1,
    maxLines: limit ?? 2000,
    maxBytes: READ_MAX_BYTES,
  })
  if (!result.ok) return failed(`read_file ${path}: ${result.refusal.message}`)
  const file = result.value
  if (file.totalLines === 0) return { kind: 'done', ok: true, output: `(${file.path} is empty)` }
  if (file.endLine < file.startLine) {
    return failed(
      `read_file ${file.path}: offset ${file.startLine} is past the end (${file.totalLines} lines)`,
    )
  }
  const more = file.truncated
    ? `\n[lines ${file.startLine}–${file.endLine} of ${file.totalLines}; read on with offset ${file.endLine + 1}]`
    : ''
  return { kind: 'done', ok: true, output: `${file.content}${more}` }
}

async function writeFile(rawArgs: unknown, ctx: FileToolContext): Promise<FileToolResult> {
  const args = readArgs(WriteFileArgsSchema, rawArgs, 'write_file')
  if (!args.ok) return { kind: 'invalid', message: args.message }
  const result = await ctx.runner.writeFile(ctx.scope, args.value)
  if (!result.ok) return failed(`write_file ${args.value.path}: ${result.refusal.message}`)
  const { path, kind, bytes } = result.value
  return {
    kind: 'done',
    ok: true,
    output: `${kind === 'add' ? 'Created' : 'Updated'} ${path} (${bytes} bytes)`,
    fileChange: { changes: [{ path, kind }], status: 'completed' },
  }
}

/** Parsed first, so a malformed patch is refused without touching the runner. */
async function applyPatch(rawArgs: unknown, ctx: FileToolContext): Promise<FileToolResult> {
  const args = readArgs(ApplyPatchArgsSchema, rawArgs, 'apply_patch')
  if (!args.ok) return { kind: 'invalid', message: args.message }
  const parsed = parsePatch(args.value.input)
  if (!parsed.ok) return failed(`apply_patch: invalid patch: ${parsed.message}`)
  const result = await ctx.runner.applyPatch(ctx.scope, args.value.input)
  if (!result.ok) {
    return {
      ...failed(`apply_patch failed, nothing was changed: ${result.refusal.message}`),
      fileChange: { changes: intended(parsed.ops), status: 'failed' },
    }
  }
  const { changes } = result.value
  const letter = { add: 'A', update: 'M', delete: 'D' } as const
  const lines = changes.map((change) => `${letter[change.kind]} ${change.path}`)
  return {
    kind: 'done',
    ok: true,
    output: `Success. Updated the following files:\n${lines.join('\n')}`,
    fileChange: { changes, status: 'completed' },
  }
}

/** What a patch meant to change (reported with a failed `file_change`). */
export function intended(ops: readonly PatchOp[]): FileChange[] {
  return ops.flatMap((op): FileChange[] => {
    if (op.type === 'add') return [{ path: op.path, kind: 'add' }]
    if (op.type === 'delete') return [{ path: op.path, kind: 'delete' }]
    return op.moveTo && op.moveTo !== op.path
      ? [
          { path: op.path, kind: 'delete' },
          { path: op.moveTo, kind: 'add' },
        ]
      : [{ path: op.path, kind: 'update' }]
  })
}

function failed(output: string): { kind: 'done'; ok: false; output: string } {
  return { kind: 'done', ok: false, output }
}
