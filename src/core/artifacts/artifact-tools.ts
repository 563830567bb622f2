import type * as z from 'zod'
import {
  ARTIFACT_KINDS,
  DOCUMENT_KINDS,
  MAX_MEMORY_ENTRY_BYTES,
  MemoryToolArgsSchema,
  ReadArtifactArgsSchema,
  UpdateProgressArgsSchema,
  WriteArtifactArgsSchema,
} from '../../contract/artifacts.ts'
import { isTurnlineError } from '../../contract/errors.ts'
import { BOUNDARY_STATUSES } from '../../contract/handoff.ts'
import { readArgs } from '../sandbox/exec-tool-schemas.ts'
import type { ToolHandler, ToolRunResult } from '../tools/tool-handler.ts'
import { appendMemory, readArtifact, writeArtifact } from './artifact-service.ts'
import { ArtifactStore } from './artifact-store.ts'

/**
 * The model's tools on the workspace's durable artifacts: append a note or a decision to loop
 * memory, update the progress ledger, write a harness document, read any artifact in full (the
 * orientation shows summaries only). `read_artifact` is read-only, so it works in plan mode;
 * the others write durable state and are refused there like any state-changing tool.
 */

export const ARTIFACT_TOOL_NAMES = [
  'append_note',
  'record_decision',
  'update_progress',
  'write_artifact',
  'read_artifact',
] as const

/** Characters of an artifact `read_artifact` returns at most. */
const READ_MAX_CHARS = 64 * 1024

const milestone = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    description: { type: 'string' },
    status: { type: 'string', enum: [...BOUNDARY_STATUSES] },
  },
  required: ['id', 'status'],
  additionalProperties: false,
}

const memoryTool = (name: string, what: string) => ({
  name,
  description: `Append ${what} to the workspace's loop memory; later sessions see it.`,
  parameters: {
    type: 'object',
    properties: { text: { type: 'string', maxLength: MAX_MEMORY_ENTRY_BYTES } },
    required: ['text'],
    additionalProperties: false,
  },
})

const succeeded = (output: string): ToolRunResult => ({ kind: 'done', ok: true, output })
const failed = (output: string): ToolRunResult => ({ kind: 'done', ok: false, output })

/** A tool failure the model should read (bad input, a missing artifact, a conflict). */
async function guarded(run: () => Promise<ToolRunResult>): Promise<ToolRunResult> {
  try {
    return await run()
  } catch (error) {
    if (isTurnlineError(error, 'invalid_input', 'not_found', 'conflict', 'payload_too_large')) {
      return failed(error.message)
    }
    throw error
  }
}

function parsed<T>(schema: z.ZodType<T>, args: unknown, tool: string): T | string {
  const result = readArgs(schema, args, tool)
  return result.ok ? result.value : result.message
}

/** Long: one table of the artifact tools, a few lines each. */
export function artifactToolHandlers(store: ArtifactStore, sessionId: string): ToolHandler[] {
  const append = (name: string, kind: 'notes' | 'decisions', what: string): ToolHandler => ({
    definition: memoryTool(name, what),
    kind: 'builtin',
    readOnly: false,
    run: (args, ctx) =>
      guarded(async () => {
        const input = parsed(MemoryToolArgsSchema, args, name)
        if (typeof input === 'string') return failed(input)
        const view = await appendMemory(store, kind, input.text, ctx.now())
        return succeeded(`appended to ${view.path} (${view.summary ?? 'ok'})`)
      }),
  })
  return [
    append('append_note', 'notes', 'a note (a fact, an observation, what you tried)'),
    append('record_decision', 'decisions', 'a decision and its reason'),
    {
      definition: {
        name: 'update_progress',
        description:
          "Update the workspace's progress ledger; fields left out keep their value (a new ledger needs a goal).",
        parameters: {
          type: 'object',
          properties: {
            goal: { type: 'string' },
            milestones: { type: 'array', items: milestone },
            milestone_status: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  id: { type: 'string' },
                  status: { type: 'string', enum: [...BOUNDARY_STATUSES] },
                },
                required: ['id', 'status'],
                additionalProperties: false,
              },
            },
            confidence: { type: 'number', minimum: 0, maximum: 1 },
            known_issues: { type: 'array', items: { type: 'string' } },
          },
          additionalProperties: false,
        },
      },
      kind: 'builtin',
      readOnly: false,
      run: (args, ctx) =>
        guarded(async () => {
          const update = parsed(UpdateProgressArgsSchema, args, 'update_progress')
          if (typeof update === 'string') return failed(update)
          const view = await writeArtifact(
            store,
            { kind: 'progress', update },
            { sessionId, now: ctx.now() },
          )
          const notes = view.warnings?.length ? ` (${view.warnings.join('; ')})` : ''
          return succeeded(`${view.summary ?? 'progress updated'}${notes}`)
        }),
    },
    {
      definition: {
        name: 'write_artifact',
        description: 'Replace a markdown harness document of the workspace.',
        parameters: {
          type: 'object',
          properties: {
            kind: { type: 'string', enum: [...DOCUMENT_KINDS] },
            content: { type: 'string' },
          },
          required: ['kind', 'content'],
          additionalProperties: false,
        },
      },
      kind: 'builtin',
      readOnly: false,
      run: (args, ctx) =>
        guarded(async () => {
          const input = parsed(WriteArtifactArgsSchema, args, 'write_artifact')
          if (typeof input === 'string') return failed(input)
          const view = await writeArtifact(store, input, { sessionId, now: ctx.now() })
          return succeeded(`wrote ${view.path}${view.summary ? ` — ${view.summary}` : ''}`)
        }),
    },
    {
      definition: {
        name: 'read_artifact',
        description:
          'Read a durable workspace artifact in full (your orientation shows summaries only).',
        parameters: {
          type: 'object',
          properties: { kind: { type: 'string', enum: [...ARTIFACT_KINDS] } },
          required: ['kind'],
          additionalProperties: false,
        },
      },
      kind: 'builtin',
      readOnly: true,
      run: (args) =>
        guarded(async () => {
          const input = parsed(ReadArtifactArgsSchema, args, 'read_artifact')
          if (typeof input === 'string') return failed(input)
          const view = await readArtifact(store, input.kind)
          const chars = [...view.content]
          const text =
            chars.length > READ_MAX_CHARS
              ? `${chars.slice(0, READ_MAX_CHARS).join('')}\n[truncated: ${chars.length - READ_MAX_CHARS} more characters]`
              : view.content
          return succeeded(`${ArtifactStore.path(input.kind)}:\n${text}`)
        }),
    },
  ]
}
