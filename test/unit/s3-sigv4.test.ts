import { describe, expect, it } from 'vitest'
import { nodeSigV4Hashes } from '../../adapters/s3/node-sigv4-hashes.ts'
import { S3Rest } from '../../adapters/s3/s3-rest.ts'
import { EMPTY_SHA256, SigV4Signer, uriEncode, webCryptoHashes } from '../../adapters/s3/sigv4.ts'

/**
 * The signer against AWS's published expected values (not against itself):
 * - the Signature Version 4 test suite (get-vanilla, get-vanilla-with-session-token,
 *   get-vanilla-query-order-key-case, get-vanilla-query-unreserved, post-vanilla), as kept in
 *   github.com/awslabs/aws-c-auth, tests/aws-signing-test-suite/v4/<case>/header-signed-request.txt
 *   and context.json: AKIDEXAMPLE, region us-east-1, service `service`, 2015-08-30T12:36:00Z;
 * - the worked examples of Amazon S3's API reference, "Examples: Signature Calculations in AWS
 *   Signature Version 4" (docs.aws.amazon.com/AmazonS3/latest/API/sig-v4-header-based-auth.html):
 *   GET Object with a range, PUT Object, GET Bucket lifecycle, GET Bucket (list), 2013-05-24.
 * Each with Web Crypto's hashes (every runtime) and with node:crypto's (the Node and Lambda entries).
 */
const HASHES = [
  ['Web Crypto', webCryptoHashes],
  ['node:crypto', nodeSigV4Hashes],
] as const
const SUITE = {
  credentials: {
    accessKeyId: 'AKIDEXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
  },
  time: new Date('2015-08-30T12:36:00Z'),
  host: 'example.amazonaws.com',
}
const S3_DOCS = {
  credentials: {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  },
  time: new Date('2013-05-24T00:00:00Z'),
  host: 'examplebucket.s3.amazonaws.com',
}

const signatureOf = (headers: Record<string, string>) =>
  /Signature=([0-9a-f]{64})$/.exec(headers.authorization ?? '')?.[1]

describe.each(HASHES)('SigV4Signer on %s hashes against the AWS test suite', (_, hashes) => {
  const signer = new SigV4Signer('us-east-1', 'service', hashes)
  const suite = (
    method: string,
    query: [string, string][],
    credentials: {
      accessKeyId: string
      secretAccessKey: string
      sessionToken?: string
    } = SUITE.credentials,
  ) =>
    signer.sign(
      { method, host: SUITE.host, path: '/', query, headers: {}, payloadHash: EMPTY_SHA256 },
      credentials,
      SUITE.time,
    )

  it('get-vanilla', async () => {
    const headers = await suite('GET', [])
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    )
    expect(headers['x-amz-date']).toBe('20150830T123600Z')
    expect(headers['x-amz-security-token']).toBeUndefined()
  })

  it('post-vanilla', async () => {
    expect(signatureOf(await suite('POST', []))).toBe(
      '5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b',
    )
  })

  it('get-vanilla-with-session-token', async () => {
    const token = '6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267'
    const headers = await suite('GET', [], { ...SUITE.credentials, sessionToken: token })
    expect(headers.authorization).toContain('SignedHeaders=host;x-amz-date;x-amz-security-token,')
    expect(signatureOf(headers)).toBe(
      '07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8',
    )
    expect(headers['x-amz-security-token']).toBe(token)
  })

  it('get-vanilla-query-order-key-case', async () => {
    const headers = await suite('GET', [
      ['Param2', 'value2'],
      ['Param1', 'value1'],
    ])
    expect(signatureOf(headers)).toBe(
      'b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500',
    )
  })

  it('get-vanilla-query-unreserved', async () => {
    const unreserved = '-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
    expect(signatureOf(await suite('GET', [[unreserved, unreserved]]))).toBe(
      '9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197',
    )
  })
})

describe.each(HASHES)(
  "SigV4Signer on %s hashes against Amazon S3's worked examples",
  (_, hashes) => {
    const signer = new SigV4Signer('us-east-1', 's3', hashes)
    const s3 = async (
      method: string,
      path: string,
      query: [string, string][],
      headers: Record<string, string>,
      payloadHash = EMPTY_SHA256,
    ) =>
      signer.sign(
        {
          method,
          host: S3_DOCS.host,
          path,
          query,
          headers: { ...headers, 'x-amz-content-sha256': payloadHash },
          payloadHash,
        },
        S3_DOCS.credentials,
        S3_DOCS.time,
      )

    it('GET Object, first 10 bytes', async () => {
      const headers = await s3('GET', '/test.txt', [], { range: 'bytes=0-9' })
      expect(headers.authorization).toBe(
        'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, ' +
          'SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, ' +
          'Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
      )
    })

    it('PUT Object, a key that needs encoding and a body', async () => {
      const body = new TextEncoder().encode('Welcome to Amazon S3.')
      const hash = await hashes.sha256Hex(body)
      expect(hash).toBe('44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072')
      const path = `/${uriEncode('test$file.text', true)}`
      expect(path).toBe('/test%24file.text')
      const headers = await s3(
        'PUT',
        path,
        [],
        { date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
        hash,
      )
      expect(headers.authorization).toContain(
        'SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,',
      )
      expect(signatureOf(headers)).toBe(
        '98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd',
      )
    })

    it('GET Bucket lifecycle, a parameter without a value', async () => {
      expect(signatureOf(await s3('GET', '/', [['lifecycle', '']], {}))).toBe(
        'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543',
      )
    })

    it('GET Bucket (list objects), parameters in canonical order', async () => {
      const query: [string, string][] = [
        ['prefix', 'J'],
        ['max-keys', '2'],
      ]
      expect(signatureOf(await s3('GET', '/', query, {}))).toBe(
        '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
      )
    })

    it("keeps the day's signing key apart per secret", async () => {
      const other = await signer.sign(
        {
          method: 'GET',
          host: S3_DOCS.host,
          path: '/',
          query: [],
          headers: {},
          payloadHash: EMPTY_SHA256,
        },
        { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'another secret' },
        S3_DOCS.time,
      )
      const same = await s3('GET', '/', [], {})
      expect(signatureOf(other)).not.toBe(signatureOf(same))
    })

    it('encodes keys as S3 does: unreserved kept, everything else percent-encoded once', () => {
      expect(uriEncode("a b/c!'()*ñ", true)).toBe('a%20b/c%21%27%28%29%2A%C3%B1')
      expect(uriEncode('a/b')).toBe('a%2Fb')
    })
  },
)

describe('S3Rest addresses', () => {
  const at = (options: Partial<ConstructorParameters<typeof S3Rest>[0]>) =>
    new S3Rest({ bucket: 'my-bucket', region: 'eu-west-1', ...options })

  it('puts the bucket in the host on AWS, and keys in the path encoded once', () => {
    expect(at({}).urlOf('a b/ü.json')).toBe(
      'https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b/%C3%BC.json',
    )
    expect(
      at({}).urlOf(undefined, [
        ['list-type', '2'],
        ['prefix', 'a/b'],
      ]),
    ).toBe('https://my-bucket.s3.eu-west-1.amazonaws.com/?list-type=2&prefix=a%2Fb')
  })

  it('puts the bucket in the path when asked, for an endpoint named by address, and for dotted buckets over https', () => {
    expect(at({ endpoint: 'https://s3.example.com', forcePathStyle: true }).urlOf('k')).toBe(
      'https://s3.example.com/my-bucket/k',
    )
    expect(at({ endpoint: 'http://127.0.0.1:9000' }).urlOf('k')).toBe(
      'http://127.0.0.1:9000/my-bucket/k',
    )
    expect(at({ bucket: 'my.bucket' }).urlOf('k')).toBe(
      'https://s3.eu-west-1.amazonaws.com/my.bucket/k',
    )
    expect(at({ endpoint: 'https://acct.r2.cloudflarestorage.com' }).urlOf()).toBe(
      'https://my-bucket.acct.r2.cloudflarestorage.com/',
    )
  })
})
