import { SignatureV4 } from '@smithy/signature-v4'
import { describe, expect, it } from 'vitest'
import { WebSha256 } from '../../adapters/shared/web-sha256.ts'
import { sigV4Problem } from '../support/sigv4-verifier.ts'

/**
 * The Bedrock stand-in's signature check is real SigV4: it accepts the worked example of AWS's
 * documentation ("Signature Version 4 signing process", IAM ListUsers, 2015-08-30) and a request
 * the adapter's signer signed, and refuses each one once anything signed in it changes.
 */
const EXAMPLE = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  region: 'us-east-1',
  service: 'iam',
}
const documented = {
  method: 'GET',
  path: '/',
  query: 'Action=ListUsers&Version=2010-05-08',
  headers: {
    'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
    host: 'iam.amazonaws.com',
    'x-amz-date': '20150830T123600Z',
    authorization:
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7',
  },
  body: '',
}

describe('the SigV4 check of the Bedrock stand-in', () => {
  it("accepts AWS's documented example and refuses it altered", () => {
    expect(sigV4Problem(documented, EXAMPLE)).toBeUndefined()
    expect(
      sigV4Problem({ ...documented, query: 'Action=ListUsers&Version=2010-05-09' }, EXAMPLE),
    ).toBe('the signature does not match the request')
    expect(sigV4Problem(documented, { ...EXAMPLE, secretAccessKey: 'other' })).toBe(
      'the signature does not match the request',
    )
    expect(sigV4Problem(documented, { ...EXAMPLE, region: 'eu-west-1' })).toMatch(
      /region us-east-1/,
    )
  })

  it("accepts what the adapter's signer (Web Crypto hashing) signs, double-encoding the model id", async () => {
    const credentials = {
      accessKeyId: 'AKIDTEST',
      secretAccessKey: 'secret/key',
      sessionToken: 'token',
    }
    const signer = new SignatureV4({
      service: 'bedrock',
      region: 'us-west-2',
      credentials,
      sha256: WebSha256,
    })
    const path = `/model/${encodeURIComponent('us.anthropic.claude-sonnet-4-5-20250929-v1:0')}/invoke-with-response-stream`
    const body = JSON.stringify({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 10 })
    const signed = await signer.sign({
      method: 'POST',
      protocol: 'https:',
      hostname: 'bedrock-runtime.us-west-2.amazonaws.com',
      path,
      query: {},
      headers: {
        host: 'bedrock-runtime.us-west-2.amazonaws.com',
        'content-type': 'application/json',
      },
      body,
    })
    const headers = Object.fromEntries(
      Object.entries(signed.headers).map(([k, v]) => [k.toLowerCase(), v]),
    )
    const expected = { ...credentials, region: 'us-west-2', service: 'bedrock' }
    const request = { method: 'POST', path, query: '', headers, body }
    expect(sigV4Problem(request, expected)).toBeUndefined()
    expect(sigV4Problem({ ...request, body: body.replace('10', '11') }, expected)).toBe(
      'x-amz-content-sha256 does not match the body',
    )
    const { 'x-amz-content-sha256': _hash, ...unhashed } = headers
    expect(sigV4Problem({ ...request, headers: unhashed }, expected)).toBe(
      'the signature does not match the request',
    )
    expect(
      sigV4Problem({ ...request, headers: { ...headers, 'x-amz-security-token': 'x' } }, expected),
    ).toBe('the session token is missing or wrong')
  })
})
