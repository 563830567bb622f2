import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/** A tool's name as the model sees it. */
export const ToolNameSchema = lazySchema(() =>
  z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'use 1–64 characters from A-Z a-z 0-9 _ -'),
)

/**
 * A function tool the client runs itself (an Open Responses `function` tool): the model may call
 * it; the turn then waits on the client, who sends the output back (`function_call_output`).
 * Turnline never runs it. Its name takes precedence over a server tool of the same name.
 */
export const ClientToolSchema = lazySchema(() =>
  z.strictObject({
    name: ToolNameSchema.describe("The function's name as the model sees it."),
    description: z
      .string()
      .max(4000)
      .default('')
      .describe('What the function does, for the model.'),
    parameters: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe('JSON Schema of the arguments object.'),
    strict: z
      .boolean()
      .optional()
      .describe('Whether the arguments must follow the schema exactly.'),
  }),
)
export type ClientTool = z.infer<typeof ClientToolSchema>
