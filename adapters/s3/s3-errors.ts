/**
 * Maps S3 SDK failures to TurnlineErrors. Conditional-write losses (412 PreconditionFailed, 409
 * ConditionalRequestConflict) are 'conflict'; a missing object is 'not_found'; transport faults,
 * throttling and 5xx are 'storage_unavailable' and retryable; configuration faults (no bucket,
 * bad credentials) are 'storage_unavailable' but not retryable.
 */
import { TurnlineError } from '../../src/contract/errors.ts'
import { refusedByRuntime } from '../shared/runtime-permission.ts'

interface SdkFailure {
  name: string
  status: number | undefined
  errno: string | undefined
}

function describeFailure(error: unknown): SdkFailure {
  if (typeof error !== 'object' || error === null) {
    return { name: String(error), status: undefined, errno: undefined }
  }
  const record = error as Record<string, unknown>
  const metadata = record.$metadata as { httpStatusCode?: unknown } | undefined
  const status = metadata?.httpStatusCode
  const code = record.code ?? record.Code
  return {
    name: typeof record.name === 'string' ? record.name : 'Error',
    status: typeof status === 'number' ? status : undefined,
    errno: typeof code === 'string' ? code : undefined,
  }
}

/** True when the SDK reports that the object does not exist. */
export function isMissingObject(error: unknown): boolean {
  const { name, status } = describeFailure(error)
  return name === 'NoSuchKey' || name === 'NotFound' || (status === 404 && name !== 'NoSuchBucket')
}

const INVALID_REQUEST = new Set(['KeyTooLongError', 'InvalidArgument', 'InvalidObjectName'])
const NOT_RETRYABLE = new Set([
  'NoSuchBucket',
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'PermanentRedirect',
  'AuthorizationHeaderMalformed',
  // The SDK found no credentials (none configured, none in its own sources): no retry finds some.
  'CredentialsProviderError',
])

/**
 * The TurnlineError of a failed S3 call. Messages and details never name the key (answers must
 * not reveal the storage layout); the key goes to the server log through `logDetails`.
 */
export function s3Error(error: unknown, action: string, key: string): TurnlineError {
  if (error instanceof TurnlineError) return error
  const refused = refusedByRuntime('storage_unavailable', `S3 ${action}`, error)
  if (refused) return refused
  const failure = describeFailure(error)
  const details = { action, s3Error: failure.name, status: failure.status }
  const logDetails = { key }
  const { name, status } = failure
  if (name === 'PreconditionFailed' || status === 412 || status === 409) {
    return new TurnlineError('conflict', `Conditional ${action} lost: the object changed`, {
      details,
      logDetails,
      cause: error,
    })
  }
  if (action === 'put' && isMissingObject(error)) {
    return new TurnlineError('not_found', 'No object to replace', {
      details,
      logDetails,
      cause: error,
    })
  }
  if (INVALID_REQUEST.has(name)) {
    return new TurnlineError('invalid_input', `S3 rejected the ${action}: ${name}`, {
      details,
      logDetails,
      cause: error,
    })
  }
  const permanent =
    NOT_RETRYABLE.has(name) ||
    (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429)
  const reason = failure.errno ? `${name} (${failure.errno})` : name
  const hint =
    name === 'CredentialsProviderError'
      ? ': no S3 credentials (set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY)'
      : ''
  return new TurnlineError('storage_unavailable', `S3 ${action} failed: ${reason}${hint}`, {
    details,
    logDetails,
    cause: error,
    retryable: !permanent,
  })
}
