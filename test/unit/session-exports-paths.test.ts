import { describe, expect, it } from 'vitest'
import { EventLogPathSchema } from '../../src/contract/harness-config.ts'
import { eventLogObjectPath } from '../../src/core/exports/session-exports.ts'
import { SessionKeys } from '../../src/store/session-ref.ts'

describe('event log export paths', () => {
  it('a path with an extension is the file; otherwise a folder with harness-<session>-<stamp>.jsonl', () => {
    const created = '2026-10-26T07:12:03.456Z'
    expect(eventLogObjectPath('out/run.jsonl', 's1', created)).toBe('out/run.jsonl')
    expect(eventLogObjectPath('events.log', 's1', created)).toBe('events.log')
    expect(eventLogObjectPath('logs', 's1', created)).toBe('logs/harness-s1-20261026T071203Z.jsonl')
    expect(eventLogObjectPath('a/.hidden', 's1', created)).toBe(
      'a/.hidden/harness-s1-20261026T071203Z.jsonl',
    )
  })

  it('keys stay in the workspace folder and out of the session store', () => {
    const keys = new SessionKeys('pre', { tenant: 't', workspace: 'w', sessionId: 's1' })
    expect(keys.workspaceObject('exports/run.jsonl')).toBe('pre/t/w/exports/run.jsonl')
    expect(keys.workspaceObject('.vtcode/logs/x.jsonl')).toBe('pre/t/w/.vtcode/logs/x.jsonl')
    for (const bad of ['../x', '/x', 'a//b', 'a/./b', '.vtcode/sessions/s1/events.jsonl', '']) {
      expect(() => keys.workspaceObject(bad), bad).toThrow(/not a workspace object path/)
      expect(EventLogPathSchema.safeParse(bad).success, bad).toBe(false)
    }
    expect(EventLogPathSchema.safeParse('.VTCODE/Sessions/x').success).toBe(false)
  })
})
