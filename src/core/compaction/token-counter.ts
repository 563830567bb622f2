import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { Tokenizer } from '../../ports/tokenizer.ts'
import { EventLoopPacer } from '../../shared/event-loop-pacer.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import { tokenizerForModel } from './bpe-tokenizer.ts'
import { contentKey, messageTexts } from './content-key.ts'
import { countPaced, SLICE_MS } from './count-pacer.ts'
import { PIECE_CHARS } from './counting-pieces.ts'

/**
 * Token accounting for the compaction decision. Each message is tokenized once: counts are cached
 * by message identity and by a content hash (so a transcript rehydrated from storage as new
 * objects is not tokenized again), and a transcript that grew by k messages costs k lookups.
 *
 * Provider-reported usage wins: {@link TokenCounter.observeUsage} anchors the estimate to the
 * prompt size the provider counted for the first n messages, and only messages added since are
 * estimated. The anchor is two numbers, so the turn engine can keep it in its state and restore
 * it in the next invocation without tokenizing the transcript at all.
 *
 * The synchronous counts never do more than a few milliseconds of work: a text longer than one
 * counting piece (PIECE_CHARS) that {@link TokenCounter.warm} has not counted yet is taken at its
 * UTF-8 length, an upper bound (a byte-level BPE token covers at least one byte), and that figure
 * is not cached. `warm` counts exactly, a piece at a time, yielding to the event loop in between;
 * callers that need exact figures (the compaction decision, the continuity tail) warm first.
 */

/** Per-message framing of the chat format (role, start and end markers). */
export const MESSAGE_OVERHEAD_TOKENS = 3
/** Per tool call: its id, type and the function wrapper. */
export const TOOL_CALL_OVERHEAD_TOKENS = 3
/**
 * Per image of a user message: an upper estimate (a large image, high detail, costs OpenAI
 * models 765–1,105 tokens and Claude up to ≈ 1,600); the provider's count replaces it.
 */
export const IMAGE_TOKENS = 1_600
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
  /** Exact counts of long texts (warmed), by the text. */
  readonly #byText = new Map<string, number>()
  readonly #pacer = new EventLoopPacer({ sliceMs: SLICE_MS })
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

  /** Exact when the text is short or was warmed, else its UTF-8 length (never less). */
  countText(text: string): number {
    return this.#textCount(text) ?? utf8Length(text)
  }

  /** Tokens of the fixed request prefix: system prompt, tool definitions and reply priming. */
  countPrefix(systemPrompt: string | undefined, tools: readonly ToolDefinition[] = []): number {
    let tokens = REPLY_PRIMING_TOKENS
    if (systemPrompt) tokens += MESSAGE_OVERHEAD_TOKENS + this.countText(systemPrompt)
    if (tools.length > 0) tokens += this.countText(JSON.stringify(tools))
    return tokens
  }

  /**
   * Counts exactly, into the caches, every message and text not counted yet, yielding to the
   * event loop between pieces (count-pacer.ts): the synchronous counts that follow are exact and
   * cheap. Linear in what is new.
   */
  async warm(messages: readonly HistoryMessage[], texts: readonly string[] = []): Promise<void> {
    for (const text of texts) {
      if (text.length > PIECE_CHARS) await this.#warmText(text)
    }
    for (const message of messages) await this.countMessagePaced(message)
  }

  /**
   * Tokens of one message, counted exactly in slices (see {@link warm}) and cached. With `limit`,
   * counting stops as soon as the count reaches it: the figure returned is then at least `limit`
   * (and at most the exact count), and it is not cached.
   */
  async countMessagePaced(
    message: HistoryMessage,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<number> {
    const known = this.#byIdentity.get(message)
    if (known !== undefined) return known
    const key = keyOf(message)
    const cached = key === undefined ? undefined : this.#byContent.get(key)
    if (cached !== undefined) {
      this.#byIdentity.set(message, cached)
      return cached
    }
    let tokens = MESSAGE_OVERHEAD_TOKENS + toolCallOverhead(message)
    for (const text of messageTexts(message)) {
      tokens += await countPaced(this.#tokenizer, text, this.#pacer, limit - tokens)
      if (tokens >= limit) return tokens
    }
    this.#stats.tokenizedMessages++
    if (key !== undefined) this.#remember(key, tokens)
    this.#byIdentity.set(message, tokens)
    return tokens
  }

  /** Tokens of one message, from a cache when it (or an equal message) was counted before. */
  countMessage(message: HistoryMessage): number {
    const known = this.#byIdentity.get(message)
    if (known !== undefined) {
      this.#stats.cachedMessages++
      return known
    }
    const key = keyOf(message)
    let tokens = key === undefined ? undefined : this.#byContent.get(key)
    if (tokens === undefined) {
      const counted = this.#tokenize(message)
      // A bound (a long text not warmed) is not cached: a later warm() counts it exactly.
      if (!counted.exact) return counted.tokens
      tokens = counted.tokens
      this.#stats.tokenizedMessages++
      if (key !== undefined) this.#remember(key, tokens)
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

  #remember(key: string, tokens: number): void {
    if (this.#byContent.size >= MAX_CACHED_CONTENTS) this.#byContent.clear()
    this.#byContent.set(key, tokens)
  }

  async #warmText(text: string): Promise<void> {
    // The text itself is the key: the engine hashes it natively, once per string.
    const key = text
    if (this.#byText.has(key)) return
    const tokens = await countPaced(this.#tokenizer, text, this.#pacer)
    if (this.#byText.size >= MAX_CACHED_CONTENTS) this.#byText.clear()
    this.#byText.set(key, tokens)
  }

  /** The exact count when it is cheap (a short text) or known (warmed); else undefined. */
  #textCount(text: string): number | undefined {
    if (text.length <= PIECE_CHARS) return this.#tokenizer.count(text)
    return this.#byText.get(text)
  }

  #tokenize(message: HistoryMessage): { tokens: number; exact: boolean } {
    let exact = true
    let tokens = MESSAGE_OVERHEAD_TOKENS + toolCallOverhead(message)
    for (const text of messageTexts(message)) {
      const counted = this.#textCount(text)
      if (counted === undefined) exact = false
      tokens += counted ?? utf8Length(text)
    }
    return { tokens, exact }
  }
}

/** Messages longer than this are cached by identity only: hashing them costs more than it saves. */
const MAX_HASHED_CHARS = 64 * 1024

function keyOf(message: HistoryMessage): string | undefined {
  let chars = 0
  for (const text of messageTexts(message)) chars += text.length
  return chars > MAX_HASHED_CHARS ? undefined : contentKey(message)
}

/**
 * Tokens a message costs beyond its texts: its tool calls' framing, or its images and documents
 * (a PDF page costs about an image; its pages are not counted here, so each counts as one).
 */
function toolCallOverhead(message: HistoryMessage): number {
  if (message.role === 'user') {
    return IMAGE_TOKENS * ((message.images?.length ?? 0) + (message.files?.length ?? 0))
  }
  if (message.role !== 'assistant') return 0
  return TOOL_CALL_OVERHEAD_TOKENS * (message.tool_calls?.length ?? 0)
}
