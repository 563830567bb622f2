import { describe, expect, it } from 'vitest'
import { redactCredentials } from '../../src/shared/redact-credentials.ts'

describe('redactCredentials', () => {
  it.each([
    [
      'Incorrect API key provided: sk-proj-****WXYZ. You can find your API key at https://x.example/keys.',
      'WXYZ',
    ],
    ['Incorrect API key provided: sk-abc123def456ghi789. See docs.', 'abc123def'],
    ['Authentication Fails, Your api key: ****abcd is invalid', 'abcd'],
    ['invalid x-api-key: sk-ant-api03-SECRETSECRET', 'SECRETSECRET'],
    ['Rate limit reached in organization org-AbCdEf123456 on tokens per min', 'AbCdEf123456'],
    ['project proj_AbCdEf123456 is over its quota', 'AbCdEf123456'],
    ['upstream said: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig', 'eyJhbGci'],
    [
      'GET https://bucket.s3.amazonaws.com/o?X-Amz-Credential=AKIAEXAMPLE%2F&X-Amz-Signature=abc123 failed',
      'abc123',
    ],
    ['fetch https://user:hunter2pass@gateway.internal/v1 failed', 'hunter2pass'],
    ['key AKIAIOSFODNN7EXAMPLE is not valid', 'IOSFODNN7'],
    ['API key not valid: AIzaSyA-1234567890abcdefghijklmnop', '1234567890abcdef'],
    ['token=ghp_abcdefghijklmnop0123 rejected', 'abcdefghijklmnop'],
  ])('%s', (text, secret) => {
    const out = redactCredentials(text)
    expect(out).not.toContain(secret)
    expect(out).toContain('[redacted]')
  })

  it('leaves ordinary provider text as it is', () => {
    for (const text of [
      "This model's maximum context length is 4096 tokens. However, you requested 5000.",
      "Invalid value for 'tool_choice': a task-based risk-free desk_top org-wide choice.",
      'The server had an error while processing your request. Sorry about that!',
      'Invalid API key',
    ]) {
      expect(redactCredentials(text)).toBe(text)
    }
  })
})
