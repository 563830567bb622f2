/** `{reasoningTokens}` when the provider reported a count of reasoning tokens. */
export function reasoningTokensOf(count: number | null | undefined): { reasoningTokens?: number } {
  return typeof count === 'number' && Number.isInteger(count) && count >= 0
    ? { reasoningTokens: count }
    : {}
}
