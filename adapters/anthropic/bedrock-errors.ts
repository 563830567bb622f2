/**
 * Bedrock's errors as the Messages API spells them, so the adapter classifies (and retries) a
 * Claude model on Bedrock as it does on Anthropic's API (anthropic-failure.ts). An HTTP error
 * names its exception in `x-amzn-ErrorType` (or the body's `__type`); an error inside the
 * stream is an event stream message of type `exception` naming it in `:exception-type`.
 */
const TYPE_OF_EXCEPTION: Readonly<Record<string, string>> = {
  validationexception: 'invalid_request_error',
  accessdeniedexception: 'permission_error',
  unrecognizedclientexception: 'authentication_error',
  invalidsignatureexception: 'authentication_error',
  expiredtokenexception: 'authentication_error',
  incompletesignatureexception: 'authentication_error',
  throttlingexception: 'rate_limit_error',
  servicequotaexceededexception: 'rate_limit_error',
  modelnotreadyexception: 'overloaded_error',
  serviceunavailableexception: 'overloaded_error',
  internalserverexception: 'api_error',
  modelstreamerrorexception: 'api_error',
  modelerrorexception: 'api_error',
  modeltimeoutexception: 'timeout_error',
  resourcenotfoundexception: 'not_found_error',
}

/** The Messages API error type of a Bedrock exception name (`ThrottlingException:http://…`). */
export function anthropicErrorType(exception: string | undefined, status?: number): string {
  const name = (exception ?? '').split(':')[0]?.trim().toLowerCase() ?? ''
  const known = TYPE_OF_EXCEPTION[name]
  if (known) return known
  if (status === 429) return 'rate_limit_error'
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status !== undefined && status >= 500) return 'api_error'
  return status === undefined ? 'api_error' : 'invalid_request_error'
}

/** The message of a Bedrock error body (`{"message": …}` or `{"Message": …}`). */
export function bedrockMessage(text: string, fallback: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown; Message?: unknown }
    const message = body.message ?? body.Message
    return typeof message === 'string' && message !== '' ? message : fallback
  } catch {
    return text.trim() === '' ? fallback : text.trim().slice(0, 2000)
  }
}

/** An error body in the Messages API's shape. */
export function anthropicErrorBody(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } })
}

/** A Bedrock HTTP error answer, as the Messages API would have answered it (same status). */
export async function anthropicErrorResponse(response: Response): Promise<Response> {
  const text = await response.text()
  const exception = response.headers.get('x-amzn-errortype') ?? exceptionOfBody(text)
  const type = anthropicErrorType(exception, response.status)
  const message = bedrockMessage(text, `Bedrock answered ${response.status}`)
  const headers = new Headers({ 'content-type': 'application/json' })
  for (const name of ['retry-after', 'x-amzn-requestid']) {
    const value = response.headers.get(name)
    if (value !== null) headers.set(name === 'x-amzn-requestid' ? 'request-id' : name, value)
  }
  return new Response(anthropicErrorBody(type, message), { status: response.status, headers })
}

function exceptionOfBody(text: string): string | undefined {
  try {
    const type = (JSON.parse(text) as { __type?: unknown }).__type
    return typeof type === 'string' ? type.replace(/^.*#/, '') : undefined
  } catch {
    return undefined
  }
}
