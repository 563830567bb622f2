import { describe, expect, it } from 'vitest'
import { isTurnlineError } from '../../src/contract/errors.ts'
import { RESPONSE_RECORD_KEY } from '../../src/contract/open-responses-record.ts'
import type { ResponsesRequest } from '../../src/contract/open-responses-request.ts'
import { toResponseRun } from '../../src/contract/open-responses-run.ts'
import { withConversationDigest } from '../../src/core/open-responses/conversation-digest.ts'
import { parseConfig } from '../../src/core/session/create-session.ts'
import { assertSameConfig } from '../../src/core/session/retried-config.ts'

/**
 * The config a keyed retry of `POST /v1/responses` is compared by: its record carries the digest
 * of the conversation the input brought, so another conversation is refused; a response
 * recorded before the digest was kept is compared without it (its retries still answer), and
 * so is one recorded before its output item ids were scoped.
 */
const configOf = async (request: ResponsesRequest, createdAt: number, digested = true) => {
  const run = toResponseRun(request, createdAt)
  return parseConfig((digested ? await withConversationDigest(run) : run).config)
}
const refused = (stored: Parameters<typeof assertSameConfig>[0], retry: typeof stored) => {
  try {
    assertSameConfig(stored, retry)
    return undefined
  } catch (error) {
    return isTurnlineError(error, 'idempotency_key_reused') ? 'refused' : error
  }
}
const ONE = { input: 'And now?' } as ResponsesRequest
const TWO = {
  input: [
    { type: 'message', role: 'user', content: 'I live in Oslo.' },
    { type: 'message', role: 'assistant', content: 'Noted.' },
    { type: 'message', role: 'user', content: 'And now?' },
  ],
} as ResponsesRequest

describe('assertSameConfig of a response', () => {
  it('the same request a second later passes; another earlier conversation is refused', async () => {
    expect(refused(await configOf(TWO, 1), await configOf(TWO, 2))).toBeUndefined()
    expect(refused(await configOf(ONE, 1), await configOf(TWO, 1))).toBe('refused')
    expect(refused(await configOf(TWO, 1), await configOf(ONE, 1))).toBe('refused')
  })

  it('a response recorded without the digest is compared by its settings alone', async () => {
    const old = await configOf(ONE, 1, false)
    expect(refused(old, await configOf(ONE, 2))).toBeUndefined()
    expect(refused(old, await configOf({ ...ONE, instructions: 'other' }, 2))).toBe('refused')
  })

  it('a response recorded before its item ids were scoped still answers its retries', async () => {
    const stored = await configOf(ONE, 1)
    const record = JSON.parse(stored.metadata[RESPONSE_RECORD_KEY] ?? '{}') as Record<
      string,
      unknown
    >
    expect(record.scoped_item_ids).toBe(true)
    const { scoped_item_ids: _scoped, ...before } = record
    const old = { ...stored, metadata: { [RESPONSE_RECORD_KEY]: JSON.stringify(before) } }
    expect(refused(old, await configOf(ONE, 2))).toBeUndefined()
    expect(refused(old, await configOf(TWO, 2))).toBe('refused')
  })
})
