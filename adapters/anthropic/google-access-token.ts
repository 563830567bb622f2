import * as z from 'zod'
import { lazySchema } from '../../src/contract/lazy-schema.ts'
import { base64Bytes, toBase64url } from '../../src/shared/base64.ts'

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** What Vertex AI asks of a token: the Cloud Platform scope. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
const GOOGLE_TOKEN_URI = 'https://oauth2.googleapis.com/token'
const METADATA_HOST = 'metadata.google.internal'

/**
 * A Google credentials file (`GOOGLE_APPLICATION_CREDENTIALS`, or what `gcloud auth
 * application-default login` writes): a service account key, or a user's refresh token.
 */
export const GoogleCredentialsSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    z.object({
      type: z.literal('service_account'),
      client_email: z.string().min(1),
      private_key: z.string().includes('PRIVATE KEY'),
      private_key_id: z.string().optional(),
      token_uri: z.url().optional(),
    }),
    z.object({
      type: z.literal('authorized_user'),
      client_id: z.string().min(1),
      client_secret: z.string().min(1),
      refresh_token: z.string().min(1),
      token_uri: z.url().optional(),
    }),
  ]),
)
export type GoogleCredentials = z.infer<typeof GoogleCredentialsSchema>

const TokenAnswerSchema = lazySchema(() =>
  z.object({
    access_token: z.string().min(1),
    expires_in: z.number().positive().optional(),
  }),
)

export interface AccessTokenSource {
  /** A valid access token (cached until a minute before it expires). */
  token(signal?: AbortSignal): Promise<string>
  /** Forget the cached token (the API refused it). */
  invalidate(): void
}

export interface GoogleTokenOptions {
  /** A credentials file's contents; absent: the metadata server of the machine (GCE, Cloud Run, GKE). */
  credentials?: GoogleCredentials
  /** The metadata server's host (`GCE_METADATA_HOST`); default `metadata.google.internal`. */
  metadataHost?: string
  fetch?: FetchLike
  now?: () => number
}

/**
 * Access tokens by Google's Application Default Credentials, on Web-standard globals: a service
 * account signs a JWT (RS256, Web Crypto) and trades it at its `token_uri`; a user's refresh
 * token is traded at Google's token endpoint; without a credentials file the machine's metadata
 * server hands out its service account's token.
 */
export function googleAccessTokens(options: GoogleTokenOptions): AccessTokenSource {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init))
  const now = options.now ?? (() => Date.now())
  let cached: { token: string; until: number } | undefined
  let pending: Promise<string> | undefined

  async function fresh(signal?: AbortSignal): Promise<string> {
    const answer = await requestToken(options, fetchImpl, now, signal)
    const lifetime = (answer.expires_in ?? 3600) * 1000
    cached = { token: answer.access_token, until: now() + Math.max(0, lifetime - 60_000) }
    return answer.access_token
  }

  return {
    async token(signal) {
      if (cached && now() < cached.until) return cached.token
      pending ??= fresh(signal).finally(() => {
        pending = undefined
      })
      return pending
    },
    invalidate() {
      cached = undefined
    },
  }
}

async function requestToken(
  options: GoogleTokenOptions,
  fetchImpl: FetchLike,
  now: () => number,
  signal: AbortSignal | undefined,
): Promise<z.infer<typeof TokenAnswerSchema>> {
  const credentials = options.credentials
  let response: Response
  if (credentials?.type === 'service_account') {
    const tokenUri = credentials.token_uri ?? GOOGLE_TOKEN_URI
    const assertion = await signedAssertion(credentials, tokenUri, Math.floor(now() / 1000))
    response = await fetchImpl(tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion,
      }).toString(),
      ...(signal ? { signal } : {}),
    })
  } else if (credentials?.type === 'authorized_user') {
    response = await fetchImpl(credentials.token_uri ?? GOOGLE_TOKEN_URI, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: credentials.client_id,
        client_secret: credentials.client_secret,
        refresh_token: credentials.refresh_token,
      }).toString(),
      ...(signal ? { signal } : {}),
    })
  } else {
    const host = options.metadataHost ?? METADATA_HOST
    response = await fetchImpl(
      `http://${host}/computeMetadata/v1/instance/service-accounts/default/token?scopes=${encodeURIComponent(CLOUD_PLATFORM_SCOPE)}`,
      { headers: { 'metadata-flavor': 'Google' }, ...(signal ? { signal } : {}) },
    )
  }
  const text = await response.text()
  if (!response.ok) {
    throw new Error(`Google token request failed (${response.status}): ${text.slice(0, 500)}`)
  }
  const parsed = TokenAnswerSchema.safeParse(JSON.parse(text))
  if (!parsed.success) throw new Error('Google token answer has no access_token')
  return parsed.data
}

const encodeJson = (value: unknown) => toBase64url(new TextEncoder().encode(JSON.stringify(value)))

/** The JWT a service account trades for a token: RS256 over its claims, with its private key. */
async function signedAssertion(
  credentials: Extract<GoogleCredentials, { type: 'service_account' }>,
  audience: string,
  issuedAt: number,
): Promise<string> {
  const header = {
    alg: 'RS256',
    typ: 'JWT',
    ...(credentials.private_key_id ? { kid: credentials.private_key_id } : {}),
  }
  const claims = {
    iss: credentials.client_email,
    scope: CLOUD_PLATFORM_SCOPE,
    aud: audience,
    iat: issuedAt,
    exp: issuedAt + 3600,
  }
  const unsigned = `${encodeJson(header)}.${encodeJson(claims)}`
  const pem = credentials.private_key.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '')
  const der = base64Bytes(pem)
  const key = await crypto.subtle.importKey(
    'pkcs8',
    der,
    { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
    false,
    ['sign'],
  )
  const signature = await crypto.subtle.sign(
    'RSASSA-PKCS1-v1_5',
    key,
    new TextEncoder().encode(unsigned),
  )
  return `${unsigned}.${toBase64url(new Uint8Array(signature))}`
}
