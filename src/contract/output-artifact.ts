import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * A tool output kept whole by reference (an "output artifact" of a session): an answer over the
 * inline limit is streamed to the store in content-addressed chunks (`outputs/chunks/<sha256>`)
 * and described by one create-only object; the model and the transcript get a bounded preview
 * naming the id. Immutable: the id is derived from the chunks' hashes, so the same bytes always
 * have the same id and are stored once per session.
 *
 * Where the descriptor is says who may read the artifact (output-artifacts.ts in src/store):
 * `outputs/<id>.json` when it was named to the model, `outputs/hidden/<id>.json` when it is kept
 * for the operators only (a hook's answer).
 *
 * Versions: 2 (written now) has the fields of 1; its place is what it says. Version 1 was
 * written before hidden descriptors existed: every artifact's descriptor, a hook's answer
 * included, went to `outputs/<id>.json`, so there it does not tell; the model's reads check such
 * a descriptor against the hook answers the session's batches record (legacy-hook-answers.ts in
 * src/core/tools).
 */

export const OUTPUT_ARTIFACT_VERSION = 2

/** Descriptor versions this build reads. */
const OutputArtifactVersionSchema = lazySchema(() => z.union([z.literal(1), z.literal(2)]))

/** Bytes of one stored chunk (the last one may be shorter). Part of the id: never change it. */
export const OUTPUT_CHUNK_BYTES = 1024 * 1024

export const OutputArtifactIdSchema = lazySchema(() =>
  z
    .string()
    .regex(/^out_[0-9a-f]{32}$/, 'an output artifact id is out_ and 32 lowercase hex characters')
    .describe('An output artifact id, as named in the preview of a tool output.'),
)

export const OutputChunkSchema = lazySchema(() =>
  z.strictObject({
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    size: z.int().min(1).max(OUTPUT_CHUNK_BYTES),
  }),
)

/** `outputs/<id>.json` or `outputs/hidden/<id>.json` (version 2; version 1 is read too). */
export const OutputArtifactSchema = lazySchema(() =>
  z.strictObject({
    version: OutputArtifactVersionSchema,
    id: OutputArtifactIdSchema,
    /** Bytes of the whole output. */
    size: z.int().min(0),
    /** Lines: newline characters, plus one when the last line has none. */
    lines: z.int().min(0),
    chunk_bytes: z.literal(OUTPUT_CHUNK_BYTES),
    chunks: z.array(OutputChunkSchema),
  }),
)
export type OutputArtifact = z.infer<typeof OutputArtifactSchema>

/** Bytes of an output the read tool returns at most in one call. */
export const READ_OUTPUT_MAX_BYTES = 32 * 1024

/** The arguments of `read_tool_output`. */
export const ReadOutputArgsSchema = lazySchema(() =>
  z.strictObject({
    artifact_id: OutputArtifactIdSchema,
    offset: z.int().min(0).optional().describe('First byte to read (0-based).'),
    length: z.int().min(1).max(READ_OUTPUT_MAX_BYTES).optional().describe('Bytes to read.'),
    start_line: z.int().min(1).optional().describe('First line to read (1-based).'),
    line_count: z.int().min(1).max(2000).optional().describe('Lines to read.'),
    search: z.string().min(1).max(1000).optional().describe('Text to find: lists matching lines.'),
    regex: z
      .string()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'A regular expression to find (JavaScript syntax without back-references or lookarounds, matched in linear time): lists matching lines.',
      ),
    ignore_case: z.boolean().optional(),
    max_matches: z.int().min(1).max(200).optional(),
  }),
)
export type ReadOutputArgs = z.infer<typeof ReadOutputArgsSchema>
