import * as z from 'zod'
import { ToolNameSchema } from './client-tool.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * Which tools the model may or must call (Open Responses `tool_choice`, the same shapes on a
 * session): `auto` (the default), `none` (answer without tools), `required` (call at least one),
 * one function by name, or `allowed_tools` (only the listed tools are offered, with a mode).
 * A forced choice (`required`, a named function) holds until the model has made one round of
 * tool calls in the turn; the turn's later requests are `auto`, so a tool loop can end.
 */
const Mode = lazySchema(() =>
  z.enum(['auto', 'none', 'required'], {
    error: 'tool_choice can be "auto", "none", "required", or an object naming a function',
  }),
)

const FunctionChoice = lazySchema(() =>
  z.strictObject({
    type: z.literal('function').describe('Always `function`.'),
    name: ToolNameSchema.describe('The tool the model must call.'),
  }),
)

const AllowedTools = lazySchema(() =>
  z.strictObject({
    type: z.literal('allowed_tools').describe('Always `allowed_tools`.'),
    mode: Mode.describe('How the model uses the allowed tools.'),
    tools: z
      .array(FunctionChoice)
      .min(1)
      .max(128)
      .describe('The tools the model is offered; the others are hidden from it.'),
  }),
)

export const ToolChoiceSchema = lazySchema(() =>
  z.union([
    Mode,
    z.discriminatedUnion('type', [FunctionChoice, AllowedTools], {
      error:
        'a tool_choice object is {type: "function", name} or {type: "allowed_tools", mode, tools}',
    }),
  ]),
)
export type ToolChoice = z.infer<typeof ToolChoiceSchema>

/** The names a choice refers to (the forced function, or the allowed tools). */
export function toolChoiceNames(choice: ToolChoice | undefined): string[] {
  if (choice === undefined || typeof choice === 'string') return []
  return choice.type === 'function' ? [choice.name] : choice.tools.map((tool) => tool.name)
}
