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

/**
 * VT Code `ThreadItem` (event schema 0.11.0): `{ "id", "type", ...fields }`, internally tagged on
 * `type`. Field order in every schema below is the serde declaration order, which is the order
 * the serializer writes. Optional fields are omitted when absent and rejected when `null`
 * (`arguments` is any JSON, so a JSON `null` there is kept as a value). There is no catch-all: an
 * unknown item type fails to parse, as it does in VT Code.
 */

const id = z.string()

export const AgentMessageItemSchema = z.object({
  id,
  type: z.literal('agent_message'),
  text: z.string(),
})

export const PlanItemSchema = z.object({
  id,
  type: z.literal('plan'),
  /** Markdown. */
  text: z.string(),
})

export const ReasoningItemSchema = z.object({
  id,
  type: z.literal('reasoning'),
  text: z.string(),
  /** e.g. "analysis", "plan", "verification". */
  stage: z.string().optional(),
})

export const CommandExecutionItemSchema = z.object({
  id,
  type: z.literal('command_execution'),
  command: z.string(),
  arguments: JsonValueSchema.optional(),
  /** Missing on read means ""; always written. */
  aggregated_output: z.string().default(''),
  exit_code: I32Schema.optional(),
  status: CommandExecutionStatusSchema,
})

export const ToolInvocationItemSchema = z.object({
  id,
  type: z.literal('tool_invocation'),
  tool_name: z.string(),
  /** Parsed arguments, or the raw text while they are still unparsable; omitted while streaming. */
  arguments: JsonValueSchema.optional(),
  /** Raw model-emitted call id. */
  tool_call_id: z.string().optional(),
  status: ToolCallStatusSchema,
  /** Set on `item.completed`. */
  outcome: ToolOutcomeSchema.optional(),
})

export const ToolOutputItemSchema = z.object({
  id,
  type: z.literal('tool_output'),
  /** The tool_invocation item id (not the model's call id). */
  call_id: z.string(),
  tool_call_id: z.string().optional(),
  spool_path: z.string().optional(),
  /** Missing on read means ""; always written. */
  output: z.string().default(''),
  exit_code: I32Schema.optional(),
  status: ToolCallStatusSchema,
})

export const FileUpdateChangeSchema = z.object({
  path: z.string(),
  kind: PatchChangeKindSchema,
})
export type FileUpdateChange = z.infer<typeof FileUpdateChangeSchema>

export const FileChangeItemSchema = z.object({
  id,
  type: z.literal('file_change'),
  changes: z.array(FileUpdateChangeSchema),
  status: PatchApplyStatusSchema,
})

export const McpToolCallItemSchema = z.object({
  id,
  type: z.literal('mcp_tool_call'),
  tool_name: z.string(),
  arguments: JsonValueSchema.optional(),
  result: z.string().optional(),
  status: McpToolCallStatusSchema.optional(),
})

export const WebSearchItemSchema = z.object({
  id,
  type: z.literal('web_search'),
  query: z.string(),
  provider: z.string().optional(),
  results: z.array(z.string()).optional(),
})

export const HarnessItemSchema = z.object({
  id,
  type: z.literal('harness'),
  event: HarnessEventKindSchema,
  message: z.string().optional(),
  command: z.string().optional(),
  path: z.string().optional(),
  exit_code: I32Schema.optional(),
  /** 1-based retry/recovery attempt. */
  attempt: U32Schema.optional(),
  error_category: z.string().optional(),
  duration_ms: U64Schema.optional(),
})

export const ErrorItemSchema = z.object({
  id,
  type: z.literal('error'),
  message: z.string(),
})

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

export const ThreadItemSchema = z
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
  .meta({ id: 'ThreadItem', description: 'A VT Code ThreadItem: what an item event carries.' })

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
