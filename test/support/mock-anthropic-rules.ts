import { createHash } from 'node:crypto'

/**
 * What the mock Anthropic server (mock-anthropic.ts) checks of a Messages API request before it
 * answers, and how it counts prompt caching — the rules a real request meets at Anthropic, so an
 * adapter that breaks one fails here as it would there. Each rule's message is the API's
 * (Messages API reference; "Extended thinking" → "Preserving thinking blocks"; "Prompt caching";
 * the 2026-10-21 API version's removal of sampling parameters).
 */

type Json = Record<string, unknown>
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const blocksOf = (content: unknown): Json[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? content.filter(isObject)
      : []

/** The signature the mock gives a thinking block: bound to its text, as Anthropic's are. */
export const signatureOf = (thinking: string): string =>
  `EqMock${createHash('sha256').update(thinking).digest('base64')}`

/** The opaque data of a redacted_thinking block the mock issued. */
export const redactedData = (seed: string): string =>
  `EmwKRedacted${createHash('sha256').update(seed).digest('base64')}`

const MAX_BREAKPOINTS = 4

/** The API's 400 message for a request that breaks a rule, or undefined when it is valid. */
export function requestViolation(
  body: Json,
  issuedRedacted: ReadonlySet<string>,
): string | undefined {
  for (const field of ['temperature', 'top_p', 'top_k']) {
    if (field in body) return `${field}: Extra inputs are not permitted`
  }
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required'
  const maxTokens = body.max_tokens
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return 'max_tokens: Field required'
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return 'messages: at least one message is required'
  }
  const thinking = isObject(body.thinking) ? body.thinking : undefined
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens
    if (typeof budget !== 'number' || budget < 1_024) {
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
    }
    if (budget >= maxTokens) return '`max_tokens` must be greater than `thinking.budget_tokens`'
  }
  const choice = toolChoiceViolation(body, thinking)
  if (choice) return choice
  const messages = body.messages.filter(isObject)
  let breakpoints = [...blocksOf(body.system), ...toolsOf(body)].filter(
    (block) => block.cache_control,
  ).length
  for (const [i, message] of messages.entries()) {
    const blocks = blocksOf(message.content)
    for (const block of blocks) {
      if (block.cache_control) {
        breakpoints += 1
        if (block.type === 'thinking' || block.type === 'redacted_thinking') {
          return `messages.${i}: cache_control cannot be set for thinking blocks`
        }
      }
      const image = imageViolation(block)
      if (image) return `messages.${i}: ${image}`
      if (block.type === 'text' && block.text === '') {
        return `messages.${i}: text content blocks must be non-empty`
      }
      if (block.type === 'thinking' && block.signature !== signatureOf(String(block.thinking))) {
        return `messages.${i}: Invalid \`signature\` in \`thinking\` block`
      }
      if (block.type === 'redacted_thinking' && !issuedRedacted.has(String(block.data))) {
        return `messages.${i}: Invalid \`data\` in \`redacted_thinking\` block`
      }
    }
    const problem = toolPairing(messages, i)
    if (problem) return problem
  }
  if (breakpoints > MAX_BREAKPOINTS) {
    return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints}.`
  }
  if (thinking && thinking.type !== 'disabled') return thinkingKept(messages)
  return undefined
}

const MEDIA_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp']

/** An image block the API would refuse: a bad media type, data that is not base64, no URL. */
function imageViolation(block: Json): string | undefined {
  if (block.type !== 'image') return undefined
  const source = isObject(block.source) ? block.source : {}
  if (source.type === 'url') {
    return typeof source.url === 'string' && source.url.startsWith('https://')
      ? undefined
      : 'image.source.url: must be an https URL'
  }
  if (source.type !== 'base64')
    return 'image.source: Input tag does not match any of the expected tags'
  if (!MEDIA_TYPES.includes(String(source.media_type))) {
    return `image.source.base64.media_type: Input should be ${MEDIA_TYPES.map((t) => `'${t}'`).join(', ')}`
  }
  const data = String(source.data ?? '')
  return data !== '' && /^[A-Za-z0-9+/]+={0,2}$/.test(data)
    ? undefined
    : 'image.source.base64: invalid base64 data'
}

/**
 * `tool_choice`: one of the API's four types; `tool` names one of `tools`; none of them with
 * thinking on except `auto` and `none` ("Extended thinking" → "Tool use with thinking").
 */
function toolChoiceViolation(body: Json, thinking: Json | undefined): string | undefined {
  if (!('tool_choice' in body)) return undefined
  const choice = isObject(body.tool_choice) ? body.tool_choice : {}
  if (!['auto', 'any', 'tool', 'none'].includes(String(choice.type))) {
    return 'tool_choice: Input tag does not match any of the expected tags'
  }
  if (choice.type === 'none' && 'disable_parallel_tool_use' in choice) {
    return 'tool_choice.none.disable_parallel_tool_use: Extra inputs are not permitted'
  }
  if (choice.type === 'tool' && !toolsOf(body).some((tool) => tool.name === choice.name)) {
    return `tool_choice.tool.name: Tool '${String(choice.name)}' not found in provided tools`
  }
  if (
    (choice.type === 'any' || choice.type === 'tool') &&
    thinking &&
    thinking.type !== 'disabled'
  ) {
    return 'Thinking may not be enabled when tool_choice forces tool use.'
  }
  return undefined
}

function toolsOf(body: Json): Json[] {
  return Array.isArray(body.tools) ? body.tools.filter(isObject) : []
}

/** tool_use blocks answered by tool_result blocks in the next message, and only those. */
function toolPairing(messages: Json[], i: number): string | undefined {
  const message = messages[i]
  if (message?.role !== 'assistant') return undefined
  const uses = blocksOf(message.content)
    .filter((block) => block.type === 'tool_use')
    .map((block) => String(block.id))
  const next = messages[i + 1]
  const results = blocksOf(next?.content)
    .filter((block) => block.type === 'tool_result')
    .map((block) => String(block.tool_use_id))
  if (uses.length === 0 || next === undefined) return undefined
  const leading = blocksOf(next?.content).findIndex((block) => block.type !== 'tool_result')
  if (leading >= 0 && leading < results.length) {
    return `messages.${i + 1}: Did not find ${uses.length} tool_result block(s) at the beginning of this message. Messages following tool_use blocks must begin with a matching number of tool_result blocks.`
  }
  const missing = uses.filter((id) => !results.includes(id))
  if (missing.length > 0) {
    return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
  }
  const unexpected = results.filter((id) => !uses.includes(id))
  if (unexpected.length > 0) {
    return `messages.${i + 1}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${unexpected[0]}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
  }
  return undefined
}

/**
 * With thinking on, the assistant message a tool loop continues (the last one, answered by tool
 * results) must start with its thinking block, as the model produced it.
 */
function thinkingKept(messages: Json[]): string | undefined {
  const last = messages.at(-1)
  const previous = messages.at(-2)
  if (last?.role !== 'user' || previous?.role !== 'assistant') return undefined
  if (!blocksOf(last.content).some((block) => block.type === 'tool_result')) return undefined
  const first = blocksOf(previous.content)[0]
  if (first && first.type !== 'thinking' && first.type !== 'redacted_thinking') {
    return `messages.${messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`
  }
  return undefined
}

/** Tokens of a request piece, as the mock counts them (about four characters a token). */
export const tokensOf = (value: unknown): number => Math.ceil(JSON.stringify(value).length / 4)

/**
 * Prompt caching as Anthropic counts it: the request is a prefix of blocks in the order tools,
 * system, messages; each block with `cache_control` writes the prefix up to it to the cache;
 * a request reads the longest prefix an earlier request wrote (looking back at most 20 blocks
 * from each breakpoint). `cache_read_input_tokens` is that prefix, `cache_creation_input_tokens`
 * what follows it up to the last breakpoint, `input_tokens` the rest.
 */
export class PromptCache {
  private readonly written = new Set<string>()
  /** Prefixes shorter than this are not cached (the model's minimum, 1,024 tokens and up). */
  constructor(private readonly minimumTokens = 0) {}

  count(body: Json): {
    input_tokens: number
    cache_read_input_tokens: number
    cache_creation_input_tokens: number
  } {
    const messages = Array.isArray(body.messages) ? body.messages.filter(isObject) : []
    const blocks = [
      ...toolsOf(body).map((block) => ({ role: 'tools', block })),
      ...blocksOf(body.system).map((block) => ({ role: 'system', block })),
      ...messages.flatMap((message) =>
        blocksOf(message.content).map((block) => ({ role: String(message.role), block })),
      ),
    ]
    const hash = createHash('sha256').update(String(body.model))
    const prefixes: { key: string; tokens: number; breakpoint: boolean }[] = []
    let tokens = 0
    for (const { role, block } of blocks) {
      const { cache_control, ...plain } = block
      hash.update(JSON.stringify({ role, plain }))
      tokens += tokensOf(plain)
      prefixes.push({ key: hash.copy().digest('hex'), tokens, breakpoint: Boolean(cache_control) })
    }
    let read = 0
    for (const [at, prefix] of prefixes.entries()) {
      if (!prefix.breakpoint) continue
      for (let back = at; back >= Math.max(0, at - 19); back--) {
        const candidate = prefixes[back]
        if (candidate && this.written.has(candidate.key)) {
          read = Math.max(read, candidate.tokens)
          break
        }
      }
    }
    let end = read
    for (const prefix of prefixes) {
      if (!prefix.breakpoint || prefix.tokens < this.minimumTokens) continue
      this.written.add(prefix.key)
      end = Math.max(end, prefix.tokens)
    }
    return {
      input_tokens: tokens - end,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: end - read,
    }
  }

  clear(): void {
    this.written.clear()
  }
}
