import * as z from 'zod'
import {
  CommandExecutionStatusSchema,
  HarnessEventKindSchema,
  McpToolCallStatusSchema,
  PatchApplyStatusSchema,
  PatchChangeKindSchema,
  ToolCallStatusSchema,
  ToolOutcomeSchema,
} from './enums.ts'
import { I32Schema, U32Schema, U64Schema } from './integers.ts'
import { JsonValueSchema } from './json-value.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * VT Code `ThreadItem` (event schema 0.11.0): `{ "id", "type", ...fields }`, internally tagged on
 * `type`. Field order in every schema below is the serde declaration order, which is the order
 * the serializer writes. Optional fields are omitted when absent and rejected when `null`
 * (`arguments` is any JSON, so a JSON `null` there is kept as a value). There is no catch-all: an
 * unknown item type fails to parse, as it does in VT Code.
 */

const id = lazySchema(() =>
  z.string().describe('The item id; its started, updated and completed events share it.'),
)

export const AgentMessageItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('agent_message').describe('Always `agent_message`.'),
    text: z.string().describe('The text.'),
  }),
)

export const PlanItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('plan').describe('Always `plan`.'),
    text: z.string().describe('Markdown.'),
  }),
)

export const ReasoningItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('reasoning').describe('Always `reasoning`.'),
    text: z.string().describe('The text.'),
    stage: z.string().optional().describe('e.g. "analysis", "plan", "verification".'),
  }),
)

export const CommandExecutionItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('command_execution').describe('Always `command_execution`.'),
    command: z.string().describe('The command line.'),
    arguments: JsonValueSchema.optional().describe("The call's arguments (any JSON)."),
    aggregated_output: z.string().default('').describe('Missing on read means ""; always written.'),
    exit_code: I32Schema.optional().describe('The exit status, once known.'),
    status: CommandExecutionStatusSchema.describe('Where the item stands.'),
  }),
)

export const ToolInvocationItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('tool_invocation').describe('Always `tool_invocation`.'),
    tool_name: z.string().describe('The tool called.'),
    arguments: JsonValueSchema.optional().describe(
      'Parsed arguments, or the raw text while they are still unparsable; omitted while streaming.',
    ),
    tool_call_id: z.string().optional().describe('Raw model-emitted call id.'),
    status: ToolCallStatusSchema.describe('Where the item stands.'),
    outcome: ToolOutcomeSchema.optional().describe('Set on `item.completed`.'),
  }),
)

export const ToolOutputItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('tool_output').describe('Always `tool_output`.'),
    call_id: z.string().describe("The tool_invocation item id (not the model's call id)."),
    tool_call_id: z.string().optional().describe("The model's call id."),
    spool_path: z.string().optional().describe('Where the full output is kept, when it was cut.'),
    output: z.string().default('').describe('Missing on read means ""; always written.'),
    exit_code: I32Schema.optional().describe('The exit status, once known.'),
    status: ToolCallStatusSchema.describe('Where the item stands.'),
  }),
)

export const FileUpdateChangeSchema = lazySchema(() =>
  z.object({
    path: z.string().describe('The file, relative to the workspace.'),
    kind: PatchChangeKindSchema.describe('`add`, `delete` or `update`.'),
  }),
)
export type FileUpdateChange = z.infer<typeof FileUpdateChangeSchema>

export const FileChangeItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('file_change').describe('Always `file_change`.'),
    changes: z.array(FileUpdateChangeSchema).describe('The files changed.'),
    status: PatchApplyStatusSchema.describe('Where the item stands.'),
  }),
)

export const McpToolCallItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('mcp_tool_call').describe('Always `mcp_tool_call`.'),
    tool_name: z.string().describe('The tool called.'),
    arguments: JsonValueSchema.optional().describe("The call's arguments (any JSON)."),
    result: z.string().optional().describe("The tool's result text."),
    status: McpToolCallStatusSchema.optional().describe('Where the item stands.'),
  }),
)

export const WebSearchItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('web_search').describe('Always `web_search`.'),
    query: z.string().describe('The search query.'),
    provider: z.string().optional().describe('The search provider.'),
    results: z.array(z.string()).optional().describe('Result snippets or links.'),
  }),
)

export const HarnessItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('harness').describe('Always `harness`.'),
    event: HarnessEventKindSchema.describe('The harness event.'),
    message: z.string().optional().describe('What happened.'),
    command: z.string().optional().describe('The command line.'),
    path: z.string().optional().describe('The file, relative to the workspace.'),
    exit_code: I32Schema.optional().describe('The exit status, once known.'),
    attempt: U32Schema.optional().describe('1-based retry/recovery attempt.'),
    error_category: z.string().optional().describe('The class of failure, when it failed.'),
    duration_ms: U64Schema.optional().describe('How long it took (ms).'),
  }),
)

export const ErrorItemSchema = lazySchema(() =>
  z.object({
    id,
    type: z.literal('error').describe('Always `error`.'),
    message: z.string().describe('What happened.'),
  }),
)

/** Every item schema by its `type`, in VT Code's declaration order. */
export const THREAD_ITEM_SCHEMAS = {
  agent_message: AgentMessageItemSchema,
  plan: PlanItemSchema,
  reasoning: ReasoningItemSchema,
  command_execution: CommandExecutionItemSchema,
  tool_invocation: ToolInvocationItemSchema,
  tool_output: ToolOutputItemSchema,
  file_change: FileChangeItemSchema,
  mcp_tool_call: McpToolCallItemSchema,
  web_search: WebSearchItemSchema,
  harness: HarnessItemSchema,
  error: ErrorItemSchema,
} as const

export const ThreadItemSchema = lazySchema(() =>
  z
    .discriminatedUnion('type', [
      AgentMessageItemSchema,
      PlanItemSchema,
      ReasoningItemSchema,
      CommandExecutionItemSchema,
      ToolInvocationItemSchema,
      ToolOutputItemSchema,
      FileChangeItemSchema,
      McpToolCallItemSchema,
      WebSearchItemSchema,
      HarnessItemSchema,
      ErrorItemSchema,
    ])
    .meta({ id: 'ThreadItem', description: 'A VT Code ThreadItem: what an item event carries.' }),
)

export type AgentMessageItem = z.infer<typeof AgentMessageItemSchema>
export type PlanItem = z.infer<typeof PlanItemSchema>
export type ReasoningItem = z.infer<typeof ReasoningItemSchema>
export type CommandExecutionItem = z.infer<typeof CommandExecutionItemSchema>
export type ToolInvocationItem = z.infer<typeof ToolInvocationItemSchema>
export type ToolOutputItem = z.infer<typeof ToolOutputItemSchema>
export type FileChangeItem = z.infer<typeof FileChangeItemSchema>
export type McpToolCallItem = z.infer<typeof McpToolCallItemSchema>
export type WebSearchItem = z.infer<typeof WebSearchItemSchema>
export type HarnessItem = z.infer<typeof HarnessItemSchema>
export type ErrorItem = z.infer<typeof ErrorItemSchema>
export type ThreadItem = z.infer<typeof ThreadItemSchema>
export type ThreadItemType = ThreadItem['type']

export const THREAD_ITEM_TYPES = Object.keys(THREAD_ITEM_SCHEMAS) as ThreadItemType[]
