import { describe, expect, it } from 'vitest'
import { TurnlineClient } from '../../client/index.ts'

/**
 * The client's base URL: a user or password in it is refused when the client is made, without
 * the password in the message (a fetch refuses such a URL at every request, quoting it whole).
 */
describe('the client base URL', () => {
  it('refuses a user or password, without showing it', () => {
    for (const baseUrl of [
      'http://user:s3cret-pass@127.0.0.1:9',
      'https://s3cret-pass@example.com',
    ]) {
      let error: unknown
      try {
        new TurnlineClient({ baseUrl })
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(TypeError)
      expect(String(error)).toMatch(/must not hold a user or password/)
      expect(String(error)).not.toContain('s3cret-pass')
    }
  })

  it('keeps a path prefix', () => {
    const client = new TurnlineClient({ baseUrl: 'https://example.com/turnline/' })
    expect(client.transport.baseUrl).toBe('https://example.com/turnline')
  })
})
