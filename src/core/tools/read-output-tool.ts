import {
  type OutputArtifact,
  READ_OUTPUT_MAX_BYTES,
  type ReadOutputArgs,
  ReadOutputArgsSchema,
} from '../../contract/output-artifact.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import { LinearRegexError, linearRegex } from '../../shared/linear-regex.ts'
import type { OutputArtifacts } from '../../store/output-artifacts.ts'
import { readArgs } from '../sandbox/exec-tool-schemas.ts'
import { joinBytes } from './join-bytes.ts'
import type { LegacyHookAnswers } from './legacy-hook-answers.ts'
import { outputLines } from './output-lines.ts'
import { textOfSlice } from './output-preview.ts'
import type { ToolHandler, ToolRunResult } from './tool-handler.ts'

export const READ_OUTPUT_TOOL = 'read_tool_output'

const DEFAULT_BYTES = 16 * 1024
const DEFAULT_LINES = 200
const DEFAULT_MATCHES = 20
/** Characters of a matching line shown around the match. */
const MATCH_CONTEXT = 200

const succeeded = (output: string): ToolRunResult => ({ kind: 'done', ok: true, output })
const failed = (output: string): ToolRunResult => ({ kind: 'done', ok: false, output })

async function readBytes(outputs: OutputArtifacts, artifact: OutputArtifact, args: ReadOutputArgs) {
  const start = Math.min(args.offset ?? 0, artifact.size)
  const end = Math.min(start + (args.length ?? DEFAULT_BYTES), artifact.size)
  const parts: Uint8Array[] = []
  for await (const part of outputs.read(artifact, start, end)) parts.push(part)
  const bytes = joinBytes(parts)
  const header = `[${artifact.id}: bytes ${start}–${end} of ${artifact.size}]`
  return `${header}\n${textOfSlice(bytes, { before: start > 0, after: end < artifact.size })}`
}

async function readLines(outputs: OutputArtifacts, artifact: OutputArtifact, args: ReadOutputArgs) {
  const from = args.start_line ?? 1
  const wanted = args.line_count ?? DEFAULT_LINES
  const shown: string[] = []
  let bytes = 0
  let last = from - 1
  for await (const line of outputLines(outputs, artifact, from)) {
    if (line.number >= from + wanted) break
    const text = line.cut ? `${line.text} [line cut]` : line.text
    bytes += text.length + 1
    if (bytes > READ_OUTPUT_MAX_BYTES && shown.length > 0) break
    shown.push(text.slice(0, READ_OUTPUT_MAX_BYTES))
    last = line.number
  }
  const header = `[${artifact.id}: lines ${from}–${last} of ${artifact.lines}]`
  return `${header}\n${shown.join('\n')}`
}

/** Where `line` matches what the call looks for (a string, or a regular expression). */
type LineMatcher = (line: string) => { index: number; end: number } | undefined

function matcherOf(args: ReadOutputArgs): LineMatcher | string {
  if (args.regex !== undefined) {
    try {
      const pattern = linearRegex(args.regex, { ignoreCase: args.ignore_case === true })
      // One budget for the lines of the call (the search ends with a LinearRegexError past it).
      const budget = pattern.budget()
      return (line) => pattern.exec(line, budget)
    } catch (error) {
      if (error instanceof LinearRegexError) return `regex: ${error.message}`
      throw error
    }
  }
  const needle = args.ignore_case ? (args.search ?? '').toLowerCase() : (args.search ?? '')
  return (line) => {
    const index = (args.ignore_case ? line.toLowerCase() : line).indexOf(needle)
    return index === -1 ? undefined : { index, end: index + needle.length }
  }
}

async function search(
  outputs: OutputArtifacts,
  artifact: OutputArtifact,
  args: ReadOutputArgs,
  matches: LineMatcher,
) {
  const most = args.max_matches ?? DEFAULT_MATCHES
  const found: string[] = []
  let more = false
  for await (const line of outputLines(outputs, artifact)) {
    const match = matches(line.text)
    if (match === undefined) continue
    if (found.length === most) {
      more = true
      break
    }
    const from = Math.max(0, match.index - MATCH_CONTEXT)
    const shown = line.text.slice(from, match.end + MATCH_CONTEXT)
    found.push(`line ${line.number} (byte ${line.offset}): ${from > 0 ? '…' : ''}${shown}`)
  }
  const header =
    `[${artifact.id}: ${found.length} matching line${found.length === 1 ? '' : 's'}` +
    `${more ? ` (the first ${most}; more follow)` : ''} of ${artifact.lines}]`
  return `${header}\n${found.join('\n')}`.slice(0, READ_OUTPUT_MAX_BYTES)
}

/** `read_tool_output`'s definition: one object for every session (the catalog hash keeps its JSON). */
const READ_OUTPUT_DEFINITION: ToolDefinition = {
  name: READ_OUTPUT_TOOL,
  description:
    'Read a tool output or an input text that was too long to show whole: its preview (or ' +
    'a command answer, as output_artifact_id) names the artifact id (out_…). Give offset/length for bytes, ' +
    'start_line/line_count for lines, search for the lines containing a string, or regex for ' +
    'the lines matching a regular expression (no back-references or lookarounds). At most ' +
    `${READ_OUTPUT_MAX_BYTES} bytes a call.`,
  parameters: {
    type: 'object',
    properties: {
      artifact_id: { type: 'string', pattern: '^out_[0-9a-f]{32}$' },
      offset: { type: 'integer', minimum: 0 },
      length: { type: 'integer', minimum: 1, maximum: READ_OUTPUT_MAX_BYTES },
      start_line: { type: 'integer', minimum: 1 },
      line_count: { type: 'integer', minimum: 1, maximum: 2000 },
      search: { type: 'string', minLength: 1, maxLength: 1000 },
      regex: { type: 'string', minLength: 1, maxLength: 1000 },
      ignore_case: { type: 'boolean' },
      max_matches: { type: 'integer', minimum: 1, maximum: 200 },
    },
    required: ['artifact_id'],
    additionalProperties: false,
  },
}

/**
 * `read_tool_output`: pages through an output kept whole as an artifact of the session (the
 * preview names its id) by bytes, by lines, or by searching for a string. Read-only, so it is
 * there in plan mode too. It serves only artifacts named to the model (OutputArtifacts
 * describeForModel, and `legacy` for descriptors kept before hidden ones existed): a hook's
 * answer kept hidden is refused as an id the session does not have.
 */
export function readOutputToolHandler(
  outputs: OutputArtifacts,
  /** Checks a descriptor of version 1 (kept before hidden ones existed); without it, served. */
  legacy?: LegacyHookAnswers,
): ToolHandler {
  return {
    definition: READ_OUTPUT_DEFINITION,
    kind: 'builtin',
    readOnly: true,
    async run(raw) {
      const parsed = readArgs(ReadOutputArgsSchema, raw, READ_OUTPUT_TOOL)
      if (!parsed.ok) return failed(parsed.message)
      const args = parsed.value
      // Only what was named to the model: a hidden hook answer reads as an unknown id.
      const artifact = await outputs.describeForModel(args.artifact_id)
      const hidden = artifact?.version === 1 && legacy ? await legacy(artifact.id) : false
      if (!artifact || hidden) {
        return failed(`no output artifact ${args.artifact_id} in this session`)
      }
      if (args.search !== undefined || args.regex !== undefined) {
        const matches = matcherOf(args)
        if (typeof matches === 'string') return failed(matches)
        try {
          return succeeded(await search(outputs, artifact, args, matches))
        } catch (error) {
          if (error instanceof LinearRegexError) return failed(`regex: ${error.message}`)
          throw error
        }
      }
      if (args.start_line !== undefined || args.line_count !== undefined) {
        return succeeded(await readLines(outputs, artifact, args))
      }
      return succeeded(await readBytes(outputs, artifact, args))
    },
  }
}
