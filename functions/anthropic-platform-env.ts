import * as z from 'zod'

/**
 * Where sessions on `api: "anthropic"` reach Claude (docs/models.md#claude-on-bedrock-and-vertex),
 * spread into the environment schema of env-config.ts: Anthropic's API (ANTHROPIC_API_KEY or
 * ANTHROPIC_AUTH_TOKEN, ANTHROPIC_BASE_URL), Amazon Bedrock or Google Cloud Vertex AI. The variable names are the ones
 * AWS, Google and Anthropic's own tools use.
 */
const text = z.string().trim().min(1)
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' })

export const AnthropicPlatformEnvShape = {
  /**
   * Anthropic's Messages API (`api: "anthropic"`): the API key, or instead a bearer token (the
   * SDK's ANTHROPIC_AUTH_TOKEN: a gateway's in front of Claude; either goes as `Authorization:
   * Bearer`), and an endpoint other than Anthropic's.
   */
  ANTHROPIC_API_KEY: text.optional(),
  ANTHROPIC_AUTH_TOKEN: text.optional(),
  ANTHROPIC_BASE_URL: httpUrl.optional(),
  /** `anthropic` (default), `bedrock` or `vertex`. */
  TURNLINE_ANTHROPIC_PLATFORM: z.enum(['anthropic', 'bedrock', 'vertex']).optional(),
  /** Bedrock: the region, credentials of the AWS chain (or these keys), or a Bedrock API key. */
  AWS_REGION: text.optional(),
  AWS_DEFAULT_REGION: text.optional(),
  AWS_ACCESS_KEY_ID: text.optional(),
  AWS_SECRET_ACCESS_KEY: text.optional(),
  AWS_SESSION_TOKEN: text.optional(),
  AWS_BEARER_TOKEN_BEDROCK: text.optional(),
  ANTHROPIC_BEDROCK_BASE_URL: httpUrl.optional(),
  /** Vertex AI: the project, the region (or `global`), Application Default Credentials. */
  ANTHROPIC_VERTEX_PROJECT_ID: text.optional(),
  CLOUD_ML_REGION: text.optional(),
  ANTHROPIC_VERTEX_BASE_URL: httpUrl.optional(),
  GOOGLE_APPLICATION_CREDENTIALS: text.optional(),
  GCE_METADATA_HOST: z
    .string()
    .regex(/^[A-Za-z0-9.-]+(:\d{1,5})?$/, 'must be a host name, optionally :port')
    .optional(),
}

type PlatformEnv = { [K in keyof typeof AnthropicPlatformEnvShape]?: string | undefined }

/** Variables of one platform that only mean something together. */
export function anthropicPlatformChecks(env: PlatformEnv): string[] {
  const problems: string[] = []
  if (env.ANTHROPIC_API_KEY !== undefined && env.ANTHROPIC_AUTH_TOKEN !== undefined) {
    problems.push(
      'ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN: set one (an API key, or a bearer token)',
    )
  }
  if (env.TURNLINE_ANTHROPIC_PLATFORM === 'bedrock') {
    if (env.AWS_REGION === undefined && env.AWS_DEFAULT_REGION === undefined) {
      problems.push('TURNLINE_ANTHROPIC_PLATFORM=bedrock needs AWS_REGION (the Bedrock region)')
    }
    if ((env.AWS_ACCESS_KEY_ID === undefined) !== (env.AWS_SECRET_ACCESS_KEY === undefined)) {
      problems.push('AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: set both or neither')
    }
  }
  if (env.TURNLINE_ANTHROPIC_PLATFORM === 'vertex') {
    if (env.ANTHROPIC_VERTEX_PROJECT_ID === undefined || env.CLOUD_ML_REGION === undefined) {
      problems.push(
        'TURNLINE_ANTHROPIC_PLATFORM=vertex needs ANTHROPIC_VERTEX_PROJECT_ID and CLOUD_ML_REGION',
      )
    }
  }
  return problems
}
