import type { HistoryMessage } from '../../contract/history-message.ts'
import type { ToolDefinition } from '../../ports/model-client.ts'
import type { TokenizerLoader } from '../../ports/tokenizer.ts'
import { utf8Length } from '../../shared/utf8-length.ts'
import type { UsageAnchor } from './token-counter.ts'
import {
  MESSAGE_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
  TOOL_CALL_OVERHEAD_TOKENS,
  TokenCounter,
} from './token-counter.ts'

export { utf8Length }

export interface RequestPrefix {
  systemPrompt: string | undefined
  tools: readonly ToolDefinition[]
}

export interface MeterReading {
  tokens: number
  /** True when `tokens` is the byte bound (no tokenizer was needed: far enough below). */
  bound: boolean
}

/**
 * Prompt-size accounting of one invocation. The provider's count wins: the anchor (restored from
 * engine state, replaced after every response) covers the messages it counted, and only messages
 * added since are estimated. A byte-level BPE token covers at least one UTF-8 byte, so the bytes
 * of those messages bound their tokens from above: while anchor + bound stays under the soft
 * threshold nothing is tokenized, and the tokenizer (2.7 MB of ranks) is not even loaded.
 */
export class ContextMeter {
  #anchor: UsageAnchor | undefined
  #counter: TokenCounter | undefined
  #loading: Promise<TokenCounter> | undefined

  constructor(
    private readonly load: TokenizerLoader,
    private readonly model: string,
    anchor: UsageAnchor | undefined,
  ) {
    this.#anchor = anchor ? { ...anchor } : undefined
  }

  get anchor(): UsageAnchor | undefined {
    return this.#anchor ? { ...this.#anchor } : undefined
  }

  /** True once a tokenizer was loaded for this invocation. */
  get tokenized(): boolean {
    return this.#counter !== undefined
  }

  /** The provider counted `inputTokens` for a request carrying `messageCount` messages. */
  observe(inputTokens: number, messageCount: number): void {
    if (!Number.isFinite(inputTokens) || inputTokens <= 0) return
    this.#anchor = { input_tokens: Math.floor(inputTokens), message_count: messageCount }
    this.#counter?.observeUsage(inputTokens, messageCount)
  }

  /** After compaction or a segment change: the old count no longer describes the request. */
  clear(): void {
    this.#anchor = undefined
    this.#counter?.clearAnchor()
  }

  /**
   * Prompt tokens of the next request carrying `history`. When the byte bound is below `below`
   * the bound is returned (any exact count is lower still); otherwise the messages are counted —
   * until the count reaches `ceiling` (the hard threshold: past it the decision is the same
   * whatever the rest holds), so a huge input costs no more counting than the threshold.
   */
  async measure(
    history: readonly HistoryMessage[],
    prefix: RequestPrefix,
    below: number,
    ceiling = Number.POSITIVE_INFINITY,
  ): Promise<MeterReading> {
    const anchor = this.#anchor
    let bound = 0
    if (anchor && anchor.message_count <= history.length) {
      bound = anchor.input_tokens
      for (let i = anchor.message_count; i < history.length; i++) {
        bound += messageBound(history[i] as HistoryMessage)
      }
    } else {
      bound = prefixBound(prefix)
      for (const message of history) bound += messageBound(message)
    }
    if (bound < below) return { tokens: bound, bound: true }
    const counter = await this.#loadCounter()
    // Exact counts, done in slices (the thread stays responsive), and no further than needed.
    let tokens: number
    let from: number
    if (anchor && anchor.message_count <= history.length) {
      tokens = anchor.input_tokens
      from = anchor.message_count
    } else {
      await counter.warm([], prefixTexts(prefix))
      tokens = counter.countPrefix(prefix.systemPrompt, prefix.tools)
      from = 0
    }
    for (let i = from; i < history.length && tokens < ceiling; i++) {
      tokens += await counter.countMessagePaced(history[i] as HistoryMessage, ceiling - tokens)
    }
    return { tokens, bound: false }
  }

  /** Tokens of one message (the continuity tail's budget); loads the tokenizer. */
  async counter(): Promise<TokenCounter> {
    return this.#loadCounter()
  }

  #loadCounter(): Promise<TokenCounter> {
    this.#loading ??= this.load(this.model).then((tokenizer) => {
      const counter = new TokenCounter(tokenizer)
      counter.restoreAnchor(this.#anchor)
      this.#counter = counter
      return counter
    })
    return this.#loading
  }
}

function prefixTexts(prefix: RequestPrefix): string[] {
  const texts = prefix.systemPrompt ? [prefix.systemPrompt] : []
  if (prefix.tools.length > 0) texts.push(JSON.stringify(prefix.tools))
  return texts
}

function prefixBound(prefix: RequestPrefix): number {
  let tokens = REPLY_PRIMING_TOKENS
  if (prefix.systemPrompt) tokens += MESSAGE_OVERHEAD_TOKENS + utf8Length(prefix.systemPrompt)
  if (prefix.tools.length > 0) tokens += utf8Length(JSON.stringify(prefix.tools))
  return tokens
}

/** An upper bound of TokenCounter's count of the message (same framing, bytes for tokens). */
export function messageBound(message: HistoryMessage): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + utf8Length(message.content)
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      tokens += TOOL_CALL_OVERHEAD_TOKENS + utf8Length(call.name) + utf8Length(call.arguments)
    }
  } else if (message.role === 'tool') {
    tokens += utf8Length(message.tool_call_id)
  }
  return tokens
}
