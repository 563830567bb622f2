import type * as z from 'zod'
import type { ToolDefinition } from '../../ports/model-client.ts'
import { parseJson } from '../../shared/json-syntax.ts'

/**
 * The model-facing `exec_command` and `write_stdin` tools with VT Code's parameters (JSON
 * Schema for the model, zod twins to read the arguments).
 */

/** The response's output budget, a parameter of every command tool (unified_exec's too). */
export const maxOutputTokens = {
  type: 'integer',
  minimum: 1,
  maximum: 50_000,
  default: 10_000,
  description: 'Output token budget of this response (the preview is also capped at 6 KiB).',
}

/** A wait's deadline and its alias (write_stdin's and unified_exec's `wait`). */
export const waitDeadline = {
  wait_timeout_seconds: {
    type: 'integer',
    minimum: 1,
    description: 'Wait deadline in seconds (capped by the long-running command ceiling).',
  },
  timeout_seconds: {
    type: 'integer',
    minimum: 1,
    description: 'Alias of wait_timeout_seconds.',
  },
}

export const EXEC_COMMAND_TOOL: ToolDefinition = {
  name: 'exec_command',
  description:
    'Run a shell command (sh -c) in the session workspace. Returns after yield_time_ms with a ' +
    'bounded output preview; a command still running keeps its session_id: use write_stdin to ' +
    'send input, poll, or wait for its exit. The full output is kept in spool_path.',
  parameters: {
    type: 'object',
    properties: {
      cmd: { type: 'string', description: 'The shell command to run.' },
      yield_time_ms: {
        type: 'integer',
        minimum: 0,
        default: 10_000,
        description: 'How long to wait for output before returning (ms, at most 30000).',
      },
      max_output_tokens: maxOutputTokens,
      workdir: {
        type: 'string',
        description: 'Working directory, relative to the workspace (default: the workspace).',
      },
      tty: { type: 'boolean', default: false, description: 'Run in a pseudo-terminal.' },
      sandbox_permissions: {
        type: 'string',
        enum: ['use_default', 'with_additional_permissions', 'require_escalated', 'bypass_sandbox'],
      },
      additional_permissions: {
        type: 'object',
        properties: {
          fs_read: { type: 'array', items: { type: 'string' } },
          fs_write: { type: 'array', items: { type: 'string' } },
        },
      },
      justification: {
        type: 'string',
        description: 'Why the command needs more than the default sandbox permissions.',
      },
    },
    required: ['cmd'],
  },
}

export const WRITE_STDIN_TOOL: ToolDefinition = {
  name: 'write_stdin',
  description:
    'Interact with a running command session from exec_command: "write" sends chars to its ' +
    'stdin, "poll" collects new output, "wait" blocks until the command exits or ' +
    'wait_timeout_seconds pass (the deadline never kills it; wait again with the same session_id).',
  parameters: {
    type: 'object',
    properties: {
      session_id: { type: 'string', description: 'The session_id exec_command returned.' },
      action: { type: 'string', enum: ['write', 'poll', 'wait'] },
      chars: { type: 'string', description: 'Characters to write to stdin (may be empty).' },
      yield_time_ms: {
        type: 'integer',
        default: 1000,
        description: 'How long to collect output for write and poll (250–30000 ms).',
      },
      ...waitDeadline,
      max_output_tokens: maxOutputTokens,
    },
    required: ['session_id'],
    anyOf: [
      { required: ['chars'] },
      { properties: { action: { const: 'wait' } }, required: ['action'] },
    ],
  },
}

export type ParsedArgs<T> = { ok: true; value: T } | { ok: false; message: string }

/** Reads raw tool arguments (JSON text or a parsed value) with a message the model can act on. */
export function readArgs<T>(schema: z.ZodType<T>, raw: unknown, tool: string): ParsedArgs<T> {
  let value = raw
  if (typeof raw === 'string') {
    const parsed = raw.trim() === '' ? { ok: true as const, value: {} } : parseJson(raw)
    if (!parsed.ok) {
      return { ok: false, message: `${tool}: arguments are not valid JSON: ${parsed.reason}` }
    }
    value = parsed.value
  }
  const parsed = schema.safeParse(value)
  if (parsed.success) return { ok: true, value: parsed.data }
  const problems = parsed.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`)
  return { ok: false, message: `${tool}: invalid arguments: ${problems.join('; ')}` }
}
