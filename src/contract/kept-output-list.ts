import * as z from 'zod'
import { KeptHookAnswerSchema } from './kept-hook-answers.ts'
import { lazySchema } from './lazy-schema.ts'
import { OutputArtifactIdSchema } from './output-artifact.ts'
import { pageLimit } from './page-limit.ts'

/**
 * `GET /v1/sessions/{id}/artifacts`: the tool outputs a session kept whole, each by the call
 * that answered it. VT Code's events stay VT Code's: a command's `tool_output` item carries
 * `spool_path` and an empty `output`, an HTTP or MCP tool's only a preview, and no event gains
 * a field. The listing is derived when read from the batches, where each tool call's
 * `tool_output` item and the transcript's tool message the model got commit together: a
 * command's answer names its artifact in `output_artifact_id`, a kept answer's preview (and a
 * hook's deny reason) in its notice. A hook answer kept whole is listed from the batch that
 * committed the hook's effect (`hook_answers`, kept-hook-answers.ts), as an entry of kind
 * `hook_answer`. Only an artifact the session holds is listed.
 */

const Count = lazySchema(() => z.number().int().nonnegative())

export const KeptOutputSchema = lazySchema(() =>
  z
    .object({
      kind: z.literal('tool_output').describe("A tool call's output (`hook_answer`: a hook's)."),
      seq: Count.describe('Seq of the `item.completed` event of the `tool_output` item.'),
      item_id: z.string().describe('The `tool_output` item (`<call_id>:output`).'),
      call_id: z.string().describe('The `tool_invocation` item it answers.'),
      tool_call_id: z.string().optional().describe("The model's call id."),
      tool_name: z.string().optional().describe('The tool called.'),
      turn_id: z.string().optional().describe('The turn (`turn-<n>`) whose batch recorded it.'),
      artifact_id: OutputArtifactIdSchema.describe(
        'The artifact holding the answer whole: `GET /v1/sessions/{id}/artifacts/{artifact_id}`.',
      ),
      size: Count.describe('Bytes of the whole output.'),
      lines: Count.describe('Lines of the whole output.'),
    })
    .meta({ id: 'KeptOutput', description: 'A tool output kept whole, by the call that made it.' }),
)
export type KeptOutput = z.infer<typeof KeptOutputSchema>

export const KeptHookOutputSchema = lazySchema(() =>
  KeptHookAnswerSchema.extend({
    kind: z.literal('hook_answer').describe("A hook's answer (`tool_output`: a tool call's)."),
    seq: Count.describe(
      "Seq of the last event of the batch that committed the hook's effect (with its answer); 0 (`thread.started`) for a `session_start` hook run as the session was created or forked.",
    ),
    turn_id: z
      .string()
      .optional()
      .describe(
        'The turn (`turn-<n>`) whose batch recorded it; absent for one recorded as the session was created.',
      ),
  }).meta({
    id: 'KeptHookOutput',
    description: 'A hook answer kept whole, by the hook that gave it and the event that ran it.',
  }),
)
export type KeptHookOutput = z.infer<typeof KeptHookOutputSchema>

/** One entry of the listing: a tool call's output or a hook's answer, told apart by `kind`. */
export const KeptOutputEntrySchema = lazySchema(() =>
  z.discriminatedUnion('kind', [KeptOutputSchema, KeptHookOutputSchema]),
)
export type KeptOutputEntry = z.infer<typeof KeptOutputEntrySchema>

export const KeptOutputListSchema = lazySchema(() =>
  z
    .object({
      outputs: z
        .array(KeptOutputEntrySchema)
        .describe(
          'In the order of their batches, oldest first: within a batch, tool outputs by their events, then hook answers.',
        ),
      cursor: z
        .string()
        .optional()
        .describe('Opaque: pass it back as `cursor` for the next page; absent on the last page.'),
      resume: z
        .string()
        .optional()
        .describe(
          'Opaque: where this page stopped reading, on the last page too. Passed back as `cursor` later, it lists only outputs kept since (absent when the session has no batch yet).',
        ),
    })
    .meta({ id: 'KeptOutputList', description: "One page of a session's kept tool outputs." }),
)
export type KeptOutputList = z.infer<typeof KeptOutputListSchema>

export const KeptOutputsQuerySchema = lazySchema(() =>
  z.strictObject({
    cursor: z
      .string()
      .min(1)
      .max(32)
      .optional()
      .describe('The `cursor` of the previous page; absent: from the start of the session.'),
    limit: pageLimit(200, 50, 'Outputs per page (default 50).'),
  }),
)
export type KeptOutputsQuery = z.infer<typeof KeptOutputsQuerySchema>
