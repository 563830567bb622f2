import * as z from 'zod'
import { HookEventSchema } from './hook-config.ts'
import { lazySchema } from './lazy-schema.ts'
import { OutputArtifactIdSchema } from './output-artifact.ts'

/**
 * The hook answers a batch kept whole (`hook_answers`): Turnline's own field of the batch that
 * commits the hook's effect — the `post_tool_use` hooks of a call with its `tool_output`, the
 * `stop` hooks with the turn's end, `pre_compact` and `session_start{compact}` with the
 * compaction's reset, `pre_tool_use` with the call's run or rejection, `session_start{startup,
 * fork}` with batch 0, which creates the session (create-session.ts). An answer over the inline
 * limit is kept as an output artifact of the session (hook-artifact.ts in src/core/hooks); no
 * event names it (`events.jsonl` stays VT Code's), so this record is how
 * `GET /v1/sessions/{id}/artifacts` lists it.
 *
 * Versioned on its own (`version`), like `turn_input`, so the batch format does not change: a
 * reader that predates the field ignores it; one that meets a newer version reads the batch as
 * having kept no hook answer.
 */
export const KEPT_HOOK_ANSWERS_VERSION = 1

const Count = lazySchema(() => z.number().int().nonnegative())

export const KeptHookAnswerSchema = lazySchema(() =>
  z.object({
    event: HookEventSchema.describe('The hook event that ran the hook.'),
    hook: z.string().min(1).describe("The hook's `name`, else `<event>#<index>`."),
    hook_index: Count.describe("Index of the hook in the session's `hooks`."),
    hook_type: z.enum(['http', 'command']).describe('An HTTP hook or a command hook.'),
    tool_call_id: z
      .string()
      .optional()
      .describe("pre/post_tool_use: the model's call id the hook ran for."),
    artifact_id: OutputArtifactIdSchema.describe(
      'The artifact holding the answer whole: `GET /v1/sessions/{id}/artifacts/{artifact_id}`.',
    ),
    size: Count.describe('Bytes of the whole answer.'),
    lines: Count.describe('Lines of the whole answer.'),
  }),
)
export type KeptHookAnswer = z.infer<typeof KeptHookAnswerSchema>

const KeptHookAnswersV1Schema = lazySchema(() =>
  z.object({
    version: z.literal(KEPT_HOOK_ANSWERS_VERSION),
    answers: z.array(KeptHookAnswerSchema).min(1),
  }),
)

/** What a batch may hold: version 1, or a newer version this build does not read. */
export const StoredKeptHookAnswersSchema = lazySchema(() =>
  z.union([
    KeptHookAnswersV1Schema,
    z.looseObject({
      version: z
        .number()
        .int()
        .min(KEPT_HOOK_ANSWERS_VERSION + 1),
    }),
  ]),
)
export type StoredKeptHookAnswers = z.infer<typeof StoredKeptHookAnswersSchema>

/** The answers a stored record lists; none when it is a version this build does not read. */
export function readableHookAnswers(stored: StoredKeptHookAnswers | undefined): KeptHookAnswer[] {
  if (stored === undefined || stored.version !== KEPT_HOOK_ANSWERS_VERSION) return []
  return (stored as z.infer<typeof KeptHookAnswersV1Schema>).answers
}

/** The record a batch writes for `answers` (none when empty). */
export function storedHookAnswers(
  answers: readonly KeptHookAnswer[],
): StoredKeptHookAnswers | undefined {
  return answers.length ? { version: KEPT_HOOK_ANSWERS_VERSION, answers: [...answers] } : undefined
}
