import type { RequestSegment } from '../../contract/request-segment.ts'
import { hash16 } from '../compaction/segment-boundary.ts'

/**
 * The prompt-cache routing key of a session's requests in one request segment. The segment is the
 * frozen prefix (system prompt, instructions, tool catalog) every request of it repeats, and a
 * session's transcript only grows behind it: requests that name the same key reach the same cache
 * at providers that route by key (OpenAI and Azure `prompt_cache_key`, xAI's conversation id), so
 * turn after turn the prefix and the history before the new messages are read from the cache. A
 * new segment (compaction, a changed catalog or instructions) gets a new key. The key is a hash:
 * it names neither the tenant nor the session to the provider.
 */
export async function promptCacheKey(
  sessionId: string,
  segment: RequestSegment | null | undefined,
): Promise<string> {
  return `turnline-${await hash16(`${sessionId}\n${segment?.id ?? 'segment-none'}`)}`
}
