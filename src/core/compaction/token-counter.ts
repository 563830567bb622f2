import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { Tokenizer } from '../../ports/tokenizer.ts'
import { tokenizerForModel } from './bpe-tokenizer.ts'

/**
 * Token accounting for the compaction decision. Each message is tokenized once: counts are cached
 * by message identity and by a content hash (so a transcript rehydrated from storage as new
 * objects is not tokenized again), and a transcript that grew by k messages costs k lookups.
 *
 * Provider-reported usage wins: {@link TokenCounter.observeUsage} anchors the estimate to the
 * prompt size the provider counted for the first n messages, and only messages added since are
 * estimated. The anchor is two numbers, so the turn engine can keep it in its state and restore
 * it in the next invocation without tokenizing the transcript at all.
 */

/** Per-message framing of the chat format (role, start and end markers). */
export const MESSAGE_OVERHEAD_TOKENS = 3
/** Per tool call: its id, type and the function wrapper. */
export const TOOL_CALL_OVERHEAD_TOKENS = 3
/** Every reply is primed with the assistant header. */
export const REPLY_PRIMING_TOKENS = 3
/** Cached content hashes kept before the cache starts over. */
const MAX_CACHED_CONTENTS = 50_000

export interface UsageAnchor {
  /** The provider's prompt token count (input_tokens, cached tokens included). */
  input_tokens: number
  /** Transcript messages that request carried (the system prompt is not one of them). */
  message_count: number
}

export interface TokenEstimate {
  tokens: number
  /** True when the figure starts from provider-reported usage. */
  anchored: boolean
  /** Messages this call had to tokenize (not found in any cache). */
  tokenized: number
}

export interface TokenCounterStats {
  /** Messages tokenized since the counter was made. */
  tokenizedMessages: number
  /** Message counts answered from a cache. */
  cachedMessages: number
}

export class TokenCounter {
  readonly #tokenizer: Tokenizer
  readonly #byIdentity = new WeakMap<HistoryMessage, number>()
  readonly #byContent = new Map<string, number>()
  #anchor: UsageAnchor | undefined
  /** The last transcript summed in full: its array, length, ends and total. */
  #memo:
    | {
        history: readonly HistoryMessage[]
        length: number
        first: HistoryMessage | undefined
        last: HistoryMessage | undefined
        total: number
      }
    | undefined
  #stats: TokenCounterStats = { tokenizedMessages: 0, cachedMessages: 0 }

  constructor(tokenizer: Tokenizer) {
    this.#tokenizer = tokenizer
  }

  /** A counter with the encoding of `model`, loaded now (lazily, once per process). */
  static async forModel(model: string): Promise<TokenCounter> {
    return new TokenCounter(await tokenizerForModel(model))
  }

  get encoding(): Tokenizer['encoding'] {
    return this.#tokenizer.encoding
  }

  get stats(): TokenCounterStats {
    return { ...this.#stats }
  }

  get anchor(): UsageAnchor | undefined {
    return this.#anchor ? { ...this.#anchor } : undefined
  }

  countText(text: string): number {
    return this.#tokenizer.count(text)
  }

  /** Tokens of the fixed request prefix: system prompt, tool definitions and reply priming. */
  countPrefix(systemPrompt: string | undefined, tools: readonly ToolDefinition[] = []): number {
    let tokens = REPLY_PRIMING_TOKENS
    if (systemPrompt) tokens += MESSAGE_OVERHEAD_TOKENS + this.#tokenizer.count(systemPrompt)
    if (tools.length > 0) tokens += this.#tokenizer.count(JSON.stringify(tools))
    return tokens
  }

  /** Tokens of one message, from a cache when it (or an equal message) was counted before. */
  countMessage(message: HistoryMessage): number {
    const known = this.#byIdentity.get(message)
    if (known !== undefined) {
      this.#stats.cachedMessages++
      return known
    }
    const key = contentKey(message)
    let tokens = this.#byContent.get(key)
    if (tokens === undefined) {
      tokens = this.#tokenize(message)
      this.#stats.tokenizedMessages++
      if (this.#byContent.size >= MAX_CACHED_CONTENTS) this.#byContent.clear()
      this.#byContent.set(key, tokens)
    } else {
      this.#stats.cachedMessages++
    }
    this.#byIdentity.set(message, tokens)
    return tokens
  }

  /**
   * Anchors the estimate: the provider counted `inputTokens` for a request that carried the
   * first `messageCount` transcript messages. Call after every model response that reports usage.
   */
  observeUsage(inputTokens: number, messageCount: number): void {
    if (!Number.isFinite(inputTokens) || inputTokens <= 0 || messageCount < 0) return
    this.#anchor = {
      input_tokens: Math.floor(inputTokens),
      message_count: Math.floor(messageCount),
    }
  }

  /** Restores an anchor kept in engine state (same meaning as {@link observeUsage}). */
  restoreAnchor(anchor: UsageAnchor | undefined): void {
    this.#anchor = undefined
    if (anchor) this.observeUsage(anchor.input_tokens, anchor.message_count)
  }

  /** Forgets the anchor: after compaction, or when the system prompt or tool catalog changed. */
  clearAnchor(): void {
    this.#anchor = undefined
  }

  /**
   * Estimated prompt tokens of the next request carrying `history`. `prefixTokens` (see
   * {@link countPrefix}) is added only when no anchor applies: an anchor already includes it.
   */
  estimate(history: readonly HistoryMessage[], prefixTokens = 0): TokenEstimate {
    const before = this.#stats.tokenizedMessages
    const anchor = this.#anchor
    if (anchor && anchor.message_count <= history.length) {
      let tokens = anchor.input_tokens
      for (let i = anchor.message_count; i < history.length; i++) {
        tokens += this.countMessage(history[i] as HistoryMessage)
      }
      return { tokens, anchored: true, tokenized: this.#stats.tokenizedMessages - before }
    }
    const tokens = prefixTokens + this.#sum(history)
    return { tokens, anchored: false, tokenized: this.#stats.tokenizedMessages - before }
  }

  /** Sum over a transcript; an append-only growth of the last one summed costs only the new part. */
  #sum(history: readonly HistoryMessage[]): number {
    const memo = this.#memo
    let start = 0
    let total = 0
    if (
      memo &&
      memo.history === history &&
      memo.length <= history.length &&
      history[0] === memo.first &&
      history[memo.length - 1] === memo.last
    ) {
      start = memo.length
      total = memo.total
    }
    for (let i = start; i < history.length; i++)
      total += this.countMessage(history[i] as HistoryMessage)
    this.#memo = {
      history,
      length: history.length,
      first: history[0],
      last: history[history.length - 1],
      total,
    }
    return total
  }

  #tokenize(message: HistoryMessage): number {
    let tokens = MESSAGE_OVERHEAD_TOKENS + this.#tokenizer.count(message.content)
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        tokens += TOOL_CALL_OVERHEAD_TOKENS
        tokens += this.#tokenizer.count(call.name) + this.#tokenizer.count(call.arguments)
      }
    } else if (message.role === 'tool') {
      tokens += this.#tokenizer.count(message.tool_call_id)
    }
    return tokens
  }
}

/**
 * A key for equal message content: role, length and two independent 32-bit FNV-1a hashes over
 * every field the count depends on. A collision only skews an estimate.
 */
export function contentKey(message: HistoryMessage): string {
  const state = { a: 0x811c9dc5, b: 0x01000193 ^ 0x5bd1e995, length: 0 }
  feed(state, message.content)
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      feed(state, '\u0000')
      feed(state, call.name)
      feed(state, '\u0001')
      feed(state, call.arguments)
    }
  } else if (message.role === 'tool') {
    feed(state, '\u0002')
    feed(state, message.tool_call_id)
  }
  return `${message.role}:${state.length}:${(state.a >>> 0).toString(36)}:${(state.b >>> 0).toString(36)}`
}

function feed(state: { a: number; b: number; length: number }, text: string): void {
  let { a, b } = state
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x0100019b) ^ (b >>> 15)
  }
  state.a = a
  state.b = b
  state.length += text.length
}
