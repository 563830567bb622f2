import { type ErrorDocument, parseErrorDocument } from './s3-xml.ts'

/** An answer of S3 that is not 2xx: its error code (`NoSuchKey`, `PreconditionFailed`, …) and status. */
export class S3ResponseError extends Error {
  constructor(
    /** S3's error code, or one named after the status when the answer had no error document. */
    readonly code: string,
    readonly status: number,
    message: string,
    readonly requestId?: string,
  ) {
    super(`${code}: ${message}`)
    // The name is the code, as the AWS SDK names its errors (logs and the error mapping read it).
    this.name = code
  }
}

/** No credentials were configured and the runtime gave no source of them. */
export class S3CredentialsMissing extends Error {
  constructor() {
    super('no S3 credentials: none configured and no credential source on this runtime')
    // The AWS SDK's name for the same fault, so it maps (and reads in logs) as before.
    this.name = 'CredentialsProviderError'
  }
}

/** The error of an answer that is not 2xx (its body read, so the connection is free again). */
export async function responseError(answer: Response, method: string): Promise<S3ResponseError> {
  const text = method === 'HEAD' ? '' : await answer.text().catch(() => '')
  const document: ErrorDocument = text.includes('<Error')
    ? parseErrorDocument(text)
    : { code: undefined, message: undefined }
  return new S3ResponseError(
    document.code ?? codeOfStatus(answer.status),
    answer.status,
    document.message ?? `HTTP ${answer.status}`,
    answer.headers.get('x-amz-request-id') ?? undefined,
  )
}

/** What S3 means by a status when the answer has no error document (HEAD). */
function codeOfStatus(status: number): string {
  switch (status) {
    case 301:
      return 'PermanentRedirect'
    case 400:
      return 'BadRequest'
    case 403:
      return 'Forbidden'
    case 404:
      return 'NotFound'
    case 409:
      return 'Conflict'
    case 412:
      return 'PreconditionFailed'
    case 429:
      return 'TooManyRequests'
    case 503:
      return 'ServiceUnavailable'
    default:
      return status >= 500 ? 'InternalError' : `Http${status}`
  }
}
