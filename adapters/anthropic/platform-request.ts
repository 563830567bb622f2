/**
 * The Messages API request the Anthropic SDK hands its fetch, read for a platform that serves
 * Claude under another URL and body (Bedrock, Vertex): the JSON body, the beta features the
 * `anthropic-beta` header names, and the caller's abort signal.
 */
export interface PlatformRequest {
  body: Record<string, unknown>
  betas: string[]
  signal?: AbortSignal
}

export async function platformRequest(
  input: string | URL | Request,
  init?: RequestInit,
): Promise<PlatformRequest> {
  const request = new Request(input, init)
  const path = new URL(request.url).pathname
  if (request.method !== 'POST' || !path.endsWith('/v1/messages')) {
    throw new Error(
      `only POST /v1/messages is sent to this platform, not ${request.method} ${path}`,
    )
  }
  const body = (await request.json()) as Record<string, unknown>
  const betas = (request.headers.get('anthropic-beta') ?? '')
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '')
  const signal = init?.signal ?? undefined
  return { body, betas, ...(signal ? { signal } : {}) }
}
