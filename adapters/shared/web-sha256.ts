/** What the AWS SDK hands a hash (`@smithy/types` SourceData), structurally. */
type SourceData = string | ArrayBuffer | ArrayBufferView

const encoder = new TextEncoder()

function bytesOf(data: SourceData): Uint8Array<ArrayBuffer> {
  if (typeof data === 'string') return encoder.encode(data)
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0))
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice()
}

/**
 * SHA-256, or HMAC-SHA-256 when given a secret, on Web Crypto: the hash the AWS request signer
 * (`@smithy/signature-v4`) takes (its `Checksum`), so SigV4 signing — Bedrock's, SQS's — runs on
 * every runtime without Node's crypto.
 */
export class WebSha256 {
  private parts: Uint8Array<ArrayBuffer>[] = []
  private readonly secret: Uint8Array<ArrayBuffer> | undefined

  constructor(secret?: SourceData) {
    this.secret = secret === undefined ? undefined : bytesOf(secret)
  }

  update(data: SourceData): void {
    this.parts.push(bytesOf(data))
  }

  async digest(): Promise<Uint8Array> {
    const size = this.parts.reduce((sum, part) => sum + part.byteLength, 0)
    const message = new Uint8Array(size)
    let at = 0
    for (const part of this.parts) {
      message.set(part, at)
      at += part.byteLength
    }
    if (this.secret === undefined) {
      return new Uint8Array(await crypto.subtle.digest('SHA-256', message))
    }
    const key = await crypto.subtle.importKey(
      'raw',
      this.secret,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    )
    return new Uint8Array(await crypto.subtle.sign('HMAC', key, message))
  }

  reset(): void {
    this.parts = []
  }
}
