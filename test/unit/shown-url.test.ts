import { describe, expect, it } from 'vitest'
import { shownUrl } from '../../src/shared/shown-url.ts'

describe('shownUrl', () => {
  it('keeps scheme, host, path and parameter names; never credentials or values', () => {
    expect(shownUrl('https://user:pass@otlp.example.com:4318/v1/traces?api_key=s&x=1&x=2')).toBe(
      'https://otlp.example.com:4318/v1/traces?api_key=…&x=…',
    )
    expect(shownUrl('http://127.0.0.1:4318/v1/metrics')).toBe('http://127.0.0.1:4318/v1/metrics')
    expect(shownUrl('not a url with a secret')).toBe('(not a URL)')
  })
})
