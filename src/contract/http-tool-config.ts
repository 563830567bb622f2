import * as z from 'zod'
import { ToolNameSchema } from './client-tool.ts'
import { lazySchema } from './lazy-schema.ts'

/** A session-defined action the model may call; POSTed signed to an allow-listed URL. */
export const HttpToolSchema = lazySchema(() =>
  z.strictObject({
    type: z.literal('http').describe('Always `http`.'),
    name: ToolNameSchema.describe("The tool's name as the model sees it."),
    description: z.string().max(4000).default('').describe('What the tool does, for the model.'),
    parameters: z
      .record(z.string(), z.unknown())
      .default({ type: 'object', properties: {} })
      .describe('JSON Schema of the arguments object.'),
    url: z
      .url({ protocol: /^https?$/ })
      .describe("Where the tool's calls are POSTed (http or https)."),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(300_000)
      .optional()
      .describe('How long a call may take before it fails (default 30 s).'),
    read_only: z
      .boolean()
      .default(false)
      .describe('Read-only tools may run in plan mode and are what permission mode `plan` allows.'),
  }),
)
export type HttpTool = z.infer<typeof HttpToolSchema>
