import type {
  CacheControlEphemeral,
  MessageParam,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages'

const EPHEMERAL: CacheControlEphemeral = { type: 'ephemeral' }

/**
 * Prompt-caching breakpoints (`cache_control`) of one Messages API request; the API takes four
 * at most, and caches the prefix up to each (tools, then system, then messages):
 *
 * 1. the last tool — the session's tool catalog, frozen for its request segment;
 * 2. the first system block — the session's system prompt (instructions and orientation), also
 *    frozen for the segment: with 1, the segment prefix is written once and read by every later
 *    request of the session, even after a compaction changes what follows it;
 * 3. the last block of the last user message — the growing history: the next request (the tool
 *    loop's next step, or the next turn) reads all of this one back;
 * 4. the last block of the user message before it — the previous request's end, in case the
 *    newest step added more blocks than the API looks back over (20) from breakpoint 3.
 *
 * A prefix shorter than the model's minimum (1,024–4,096 tokens) is simply not cached. Thinking
 * blocks cannot carry `cache_control`; user messages end in text, images or tool results, which
 * can.
 */
export function placeCacheBreakpoints(
  tools: Tool[],
  system: TextBlockParam[],
  messages: MessageParam[],
): void {
  const lastTool = tools.at(-1)
  if (lastTool) lastTool.cache_control = EPHEMERAL
  const firstSystem = system[0]
  if (firstSystem) firstSystem.cache_control = EPHEMERAL
  let marked = 0
  for (let i = messages.length - 1; i >= 0 && marked < 2; i--) {
    const message = messages[i]
    if (message?.role !== 'user' || !Array.isArray(message.content)) continue
    const last = message.content.at(-1)
    if (last && (last.type === 'text' || last.type === 'tool_result' || last.type === 'image')) {
      last.cache_control = EPHEMERAL
      marked += 1
    }
  }
}
