import { describe, expect, it } from 'vitest'
import { parseEnv } from '../../functions/env-config.ts'
import {
  DEFAULT_WEBHOOK_ID_RETENTION_SECONDS,
  rememberUntilMs,
} from '../../functions/http/webhook-guards.ts'

const NOW_MS = 1_800_000_000_000
const NOW_S = NOW_MS / 1000

describe('how long the webhook replay guard remembers a delivery id', () => {
  it('is the retention from when it was accepted, whatever the timestamp of its message', () => {
    const retention = DEFAULT_WEBHOOK_ID_RETENTION_SECONDS
    for (const timestamp of [NOW_S - 299, NOW_S, NOW_S + 60]) {
      expect(rememberUntilMs(timestamp, retention, NOW_MS)).toBe(NOW_MS + retention * 1000)
    }
    // 4 days: past the 75½ hours of the Standard Webhooks example retry schedule.
    expect(retention * 1000).toBeGreaterThan((75 * 3600 + 35 * 60 + 5) * 1000)
  })

  it('never ends before the signature of its message could pass no more', () => {
    // A message signed 5 minutes ahead of this clock passes until 5 minutes after its timestamp.
    expect(rememberUntilMs(NOW_S + 300, 360, NOW_MS)).toBe((NOW_S + 300 + 360) * 1000)
  })

  it('is set with TURNLINE_WEBHOOK_ID_RETENTION_SECONDS, from 6 minutes to 30 days', () => {
    const retention = (value?: string) =>
      parseEnv(value === undefined ? {} : { TURNLINE_WEBHOOK_ID_RETENTION_SECONDS: value })
        .TURNLINE_WEBHOOK_ID_RETENTION_SECONDS
    expect(retention()).toBe(4 * 86_400)
    expect(retention('360')).toBe(360)
    expect(retention(String(30 * 86_400))).toBe(30 * 86_400)
    expect(() => retention('359')).toThrow(/TURNLINE_WEBHOOK_ID_RETENTION_SECONDS/)
    expect(() => retention(String(30 * 86_400 + 1))).toThrow(
      /TURNLINE_WEBHOOK_ID_RETENTION_SECONDS/,
    )
  })
})
