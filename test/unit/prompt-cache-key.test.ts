import { describe, expect, it } from 'vitest'
import type { RequestSegment } from '../../src/contract/request-segment.ts'
import { promptCacheKey } from '../../src/core/model/prompt-cache-key.ts'

const segment = (id: string) => ({ id }) as RequestSegment

describe('promptCacheKey', () => {
  it('is the same for every request of a session within one request segment', async () => {
    const key = await promptCacheKey('session-a', segment('segment-00000001'))
    expect(key).toMatch(/^turnline-[0-9a-f]{16}$/)
    expect(await promptCacheKey('session-a', segment('segment-00000001'))).toBe(key)
  })

  it('changes with the segment and with the session, and names neither', async () => {
    const key = await promptCacheKey('session-a', segment('segment-00000001'))
    expect(await promptCacheKey('session-a', segment('segment-00000002'))).not.toBe(key)
    expect(await promptCacheKey('session-b', segment('segment-00000001'))).not.toBe(key)
    expect(key).not.toContain('session-a')
    expect(key).not.toContain('segment')
  })

  it('keys a session that has no segment yet by the session alone, stably', async () => {
    const key = await promptCacheKey('session-a', null)
    expect(await promptCacheKey('session-a', undefined)).toBe(key)
    expect(await promptCacheKey('session-b', null)).not.toBe(key)
  })
})
