/**
 * Maps S3 failures to TurnlineErrors. Conditional-write losses (412 PreconditionFailed, 409
 * ConditionalRequestConflict) are 'conflict'; a missing object is 'not_found'; transport faults,
 * throttling and 5xx are 'storage_unavailable' and retryable; configuration faults (no bucket,
 * bad credentials) are 'storage_unavailable' but not retryable.
 */
import { TurnlineError } from '../../src/contract/errors.ts'
import { refusedByRuntime } from '../shared/runtime-permission.ts'
import { S3ResponseError } from './s3-response-error.ts'

interface Failure {
  name: string
  status: number | undefined
  errno: string | undefined
}

/** The code and status of an S3 answer, or the name and errno of a transport fault. */
function describeFailure(error: unknown): Failure {
  if (error instanceof S3ResponseError) {
    return { name: error.code, status: error.status, errno: undefined }
  }
  if (typeof error !== 'object' || error === null) {
    return { name: String(error), status: undefined, errno: undefined }
  }
  const record = error as Record<string, unknown>
  const cause = record.cause as Record<string, unknown> | undefined
  const code = record.code ?? cause?.code
  return {
    name: typeof record.name === 'string' ? record.name : 'Error',
    status: undefined,
    errno: typeof code === 'string' ? code : undefined,
  }
}

/** True when S3 answered that the object does not exist. */
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
  // No credentials (none configured, none from the runtime's source): no retry finds some.
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
      ? ': no S3 credentials (set S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, or give the process an AWS credential source: docs/deploy/storage.md)'
      : ''
  return new TurnlineError('storage_unavailable', `S3 ${action} failed: ${reason}${hint}`, {
    details,
    logDetails,
    cause: error,
    retryable: !permanent,
  })
}
