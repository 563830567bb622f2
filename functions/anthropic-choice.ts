import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import {
  type GoogleCredentials,
  GoogleCredentialsSchema,
  googleAccessTokens,
} from '../adapters/anthropic/google-access-token.ts'
import { vertexBaseURL, vertexFetch } from '../adapters/anthropic/vertex-fetch.ts'
import type { ModelClient } from '../src/ports/model-client.ts'
import { ConfigError, type EnvConfig } from './env-config.ts'

const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com'
/** Sent as the key to a gateway given by ANTHROPIC_BASE_URL alone (one that needs none). */
const KEYLESS_PLACEHOLDER = 'unused'

/** What only some runtimes have, for Claude on Bedrock and Vertex (passed by the entries). */
export interface AnthropicPlatformBackends {
  /** The AWS default credential chain (Node, Lambda); elsewhere AWS_ACCESS_KEY_ID and co. */
  awsCredentials?: () => Provider<AwsCredentialIdentity>
  /** Reads GOOGLE_APPLICATION_CREDENTIALS (Node, Lambda). */
  readTextFile?: (path: string) => Promise<string>
}

export interface AnthropicChoice {
  client: ModelClient
  baseURL: string
  notice: string
}

/**
 * The Anthropic side of the deployment's model (sessions on `api: "anthropic"`): Anthropic's
 * Messages API (ANTHROPIC_API_KEY, or a bearer token: ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL for
 * another endpoint with the same API), or Claude on Amazon Bedrock or Google Cloud Vertex AI
 * (TURNLINE_ANTHROPIC_PLATFORM); undefined when none is configured. Throws ConfigError when a platform's credentials cannot be
 * had on this runtime.
 */
export async function chooseAnthropic(
  config: EnvConfig,
  fetchImpl: typeof fetch,
  backends: AnthropicPlatformBackends = {},
): Promise<AnthropicChoice | undefined> {
  const platform = config.TURNLINE_ANTHROPIC_PLATFORM ?? 'anthropic'
  if (platform === 'bedrock') return bedrock(config, fetchImpl, backends)
  if (platform === 'vertex') return vertex(config, fetchImpl, backends)
  const { ANTHROPIC_API_KEY: apiKey, ANTHROPIC_AUTH_TOKEN: authToken } = config
  const baseURL = config.ANTHROPIC_BASE_URL
  if (apiKey === undefined && authToken === undefined && baseURL === undefined) return undefined
  const endpoint = baseURL ?? ANTHROPIC_DEFAULT_BASE_URL
  const { createAnthropicModelClient } = await anthropicSdkClient()
  // One credential (env-config refuses both, as the SDK does).
  const credential =
    authToken !== undefined ? { authToken } : { apiKey: apiKey ?? KEYLESS_PLACEHOLDER }
  const held =
    authToken !== undefined
      ? 'bearer token set'
      : apiKey === undefined
        ? 'no API key'
        : 'API key set'
  return {
    client: createAnthropicModelClient({ ...credential, baseURL: endpoint, fetch: fetchImpl }),
    baseURL: endpoint,
    notice: `via ${endpoint} (Anthropic Messages API, ${held})`,
  }
}

/**
 * The adapter over Anthropic's SDK, imported only when a deployment configures Claude: loading
 * the SDK costs every other start ≈ 0.1 s of CPU (docs/performance.md, cold start).
 */
function anthropicSdkClient(): Promise<
  typeof import('../adapters/anthropic/anthropic-model-client.ts')
> {
  return import('../adapters/anthropic/anthropic-model-client.ts')
}

/** The SDK's client with a platform's fetch: the same requests, sent where the platform wants. */
async function platformClient(fetch: typeof globalThis.fetch): Promise<ModelClient> {
  const { createAnthropicModelClient } = await anthropicSdkClient()
  return createAnthropicModelClient({
    apiKey: KEYLESS_PLACEHOLDER,
    baseURL: 'https://claude.invalid',
    fetch,
  })
}

async function bedrock(
  config: EnvConfig,
  fetchImpl: typeof fetch,
  backends: AnthropicPlatformBackends,
): Promise<AnthropicChoice> {
  const { bedrockBaseURL, bedrockFetch } = await import('../adapters/anthropic/bedrock-fetch.ts')
  const region = (config.AWS_REGION ?? config.AWS_DEFAULT_REGION) as string
  const baseURL = config.ANTHROPIC_BEDROCK_BASE_URL ?? bedrockBaseURL(region)
  const keys =
    config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY
      ? {
          accessKeyId: config.AWS_ACCESS_KEY_ID,
          secretAccessKey: config.AWS_SECRET_ACCESS_KEY,
          ...(config.AWS_SESSION_TOKEN ? { sessionToken: config.AWS_SESSION_TOKEN } : {}),
        }
      : undefined
  const apiKey = config.AWS_BEARER_TOKEN_BEDROCK
  const credentials = apiKey ? undefined : (keys ?? backends.awsCredentials?.())
  if (!apiKey && !credentials) {
    throw new ConfigError([
      'TURNLINE_ANTHROPIC_PLATFORM=bedrock: this runtime has no AWS credential chain; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_BEARER_TOKEN_BEDROCK)',
    ])
  }
  const auth = apiKey ? 'Bedrock API key' : keys ? 'AWS keys' : 'the AWS credential chain'
  return {
    client: await platformClient(
      bedrockFetch({
        region,
        baseURL,
        fetch: fetchImpl,
        ...(apiKey ? { apiKey } : credentials ? { credentials } : {}),
      }) as typeof fetch,
    ),
    baseURL,
    notice: `via ${baseURL} (Claude on Amazon Bedrock, ${region}, signed with ${auth})`,
  }
}

async function vertex(
  config: EnvConfig,
  fetchImpl: typeof fetch,
  backends: AnthropicPlatformBackends,
): Promise<AnthropicChoice> {
  const region = config.CLOUD_ML_REGION as string
  const projectId = config.ANTHROPIC_VERTEX_PROJECT_ID as string
  const baseURL = config.ANTHROPIC_VERTEX_BASE_URL ?? vertexBaseURL(region)
  const credentials = await googleCredentials(config, backends)
  const tokens = googleAccessTokens({
    ...(credentials ? { credentials } : {}),
    ...(config.GCE_METADATA_HOST ? { metadataHost: config.GCE_METADATA_HOST } : {}),
    fetch: fetchImpl,
  })
  const auth = credentials
    ? `${credentials.type === 'service_account' ? 'service account' : 'user'} credentials from GOOGLE_APPLICATION_CREDENTIALS`
    : "the metadata server's service account"
  return {
    client: await platformClient(
      vertexFetch({ region, projectId, baseURL, tokens, fetch: fetchImpl }) as typeof fetch,
    ),
    baseURL,
    notice: `via ${baseURL} (Claude on Vertex AI, project ${projectId}, ${region}, ${auth})`,
  }
}

async function googleCredentials(
  config: EnvConfig,
  backends: AnthropicPlatformBackends,
): Promise<GoogleCredentials | undefined> {
  const path = config.GOOGLE_APPLICATION_CREDENTIALS
  if (path === undefined) return undefined
  if (!backends.readTextFile) {
    throw new ConfigError([
      'GOOGLE_APPLICATION_CREDENTIALS: this runtime reads no credentials file; unset it to use the metadata server',
    ])
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(await backends.readTextFile(path))
  } catch (error) {
    throw new ConfigError([`GOOGLE_APPLICATION_CREDENTIALS: cannot read ${path}: ${String(error)}`])
  }
  const result = GoogleCredentialsSchema.safeParse(parsed)
  if (!result.success) {
    throw new ConfigError([
      `GOOGLE_APPLICATION_CREDENTIALS: ${path} is not a service account key or an authorized_user file`,
    ])
  }
  return result.data
}
