import type { AccessTokenSource } from './google-access-token.ts'
import { platformRequest } from './platform-request.ts'

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface VertexOptions {
  /** The Vertex AI region (`us-east5`, `europe-west1`, …) or `global`. */
  region: string
  projectId: string
  /** OAuth 2 access tokens of the deployment's Google credentials (google-access-token.ts). */
  tokens: AccessTokenSource
  /** Default `https://<region>-aiplatform.googleapis.com/v1` (`https://aiplatform.googleapis.com/v1` for `global`). */
  baseURL?: string
  fetch?: FetchLike
}

/** The `anthropic_version` Vertex AI's Claude models take in the body. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'

export function vertexBaseURL(region: string): string {
  return region === 'global'
    ? 'https://aiplatform.googleapis.com/v1'
    : `https://${region}-aiplatform.googleapis.com/v1`
}

/**
 * A fetch for the Anthropic SDK's client that sends its Messages API requests to Claude on
 * Google Cloud Vertex AI: `POST …/projects/<project>/locations/<region>/publishers/anthropic/
 * models/<model>:streamRawPredict` (or `:rawPredict`), the body without `model` and with
 * Vertex's `anthropic_version`, authorized by a bearer access token of the deployment's Google
 * credentials. Vertex streams the Messages API's own events, so the answer passes through.
 * A 401 drops the cached token, so the retry that follows asks for a new one.
 */
export function vertexFetch(options: VertexOptions): FetchLike {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init))
  const base = (options.baseURL ?? vertexBaseURL(options.region)).replace(/\/+$/, '')
  const location = `projects/${encodeURIComponent(options.projectId)}/locations/${encodeURIComponent(options.region)}`
  return async (input, init) => {
    const sent = await platformRequest(input, init)
    const { model, ...rest } = sent.body
    const action = rest.stream === true ? 'streamRawPredict' : 'rawPredict'
    const target = `${base}/${location}/publishers/anthropic/models/${encodeURIComponent(String(model))}:${action}`
    const token = await options.tokens.token(sent.signal)
    const response = await fetchImpl(target, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(sent.betas.length > 0 ? { 'anthropic-beta': sent.betas.join(',') } : {}),
      },
      body: JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest }),
      ...(sent.signal ? { signal: sent.signal } : {}),
    })
    if (response.status === 401) options.tokens.invalidate()
    return response
  }
}
