import type { AwsCredentialIdentity, Provider } from '@smithy/types'
import { MemoryObjectStore } from '../adapters/memory/memory-object-store.ts'
import type { S3Credentials } from '../adapters/s3/s3-rest.ts'
import type { SigV4Hashes } from '../adapters/s3/sigv4.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { ConfigError, type EnvConfig, ioDeadline } from './env-config.ts'

interface StoreOptions {
  defaultStore?: ((dataDir: string) => ObjectStore) | undefined
  memoryStoreByDefault?: boolean | undefined
  /** The AWS credential chain (Node, Lambda); without it S3 needs keys in the environment. */
  awsCredentials?: (() => Provider<AwsCredentialIdentity>) | undefined
  /** How the S3 client sends (Node: adapters/node-http's fetch; default the global fetch). */
  fetch?: typeof fetch | undefined
  /** How the S3 client hashes what it signs (Node: node:crypto's; default Web Crypto's). */
  sigv4Hashes?: SigV4Hashes | undefined
}

/**
 * The S3 client's credentials, first found: S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY; then
 * AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY with AWS_SESSION_TOKEN (what the AWS credential
 * chain reads first, and all Lambda gives: the function's role, as temporary keys); then the
 * entry's AWS credential chain (Node, Lambda: profiles, SSO, web identity, container and
 * instance roles — imported on the first request, cached and refreshed by it). Undefined when
 * none applies (a Worker, Deno without keys).
 */
function s3CredentialsOf(config: EnvConfig, options: StoreOptions): S3Credentials | undefined {
  if (config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY) {
    return { accessKeyId: config.S3_ACCESS_KEY_ID, secretAccessKey: config.S3_SECRET_ACCESS_KEY }
  }
  if (config.AWS_ACCESS_KEY_ID && config.AWS_SECRET_ACCESS_KEY) {
    return {
      accessKeyId: config.AWS_ACCESS_KEY_ID,
      secretAccessKey: config.AWS_SECRET_ACCESS_KEY,
      ...(config.AWS_SESSION_TOKEN ? { sessionToken: config.AWS_SESSION_TOKEN } : {}),
    }
  }
  return options.awsCredentials?.()
}

/**
 * Which store the configuration asks for (undefined: none this runtime has); of the runtime's
 * options only whether it has a default store, or keeps sessions in memory by default, counts.
 */
export function storeKindOf(
  config: EnvConfig,
  options: { defaultStore?: unknown; memoryStoreByDefault?: boolean | undefined },
): 's3' | 'fs' | 'memory' | undefined {
  const fallback = options.defaultStore ? 'fs' : options.memoryStoreByDefault ? 'memory' : undefined
  return config.TURNLINE_STORE ?? (config.S3_BUCKET !== undefined ? 's3' : fallback)
}

/**
 * The object store of a deployment: S3 (S3_BUCKET), the entry's embedded default (the
 * filesystem store on Node and Deno) or this process's memory (a Worker without a bucket).
 * The S3 adapter is imported only when S3 is configured; it sends on the entry's fetch.
 */
export async function objectStoreOf(
  config: EnvConfig,
  options: StoreOptions,
  notices: string[],
): Promise<ObjectStore> {
  switch (storeKindOf(config, options)) {
    case 's3': {
      const bucket = config.S3_BUCKET
      if (bucket === undefined) throw new ConfigError(['TURNLINE_STORE: s3 needs S3_BUCKET'])
      const credentials = s3CredentialsOf(config, options)
      if (credentials === undefined) {
        throw new ConfigError([
          'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: required with S3_BUCKET here; this runtime ' +
            'has no other source of S3 credentials than keys (these, or AWS_ACCESS_KEY_ID and ' +
            'AWS_SECRET_ACCESS_KEY with AWS_SESSION_TOKEN)',
        ])
      }
      notices.push(
        `sessions in S3 bucket ${bucket}${config.S3_PREFIX ? `/${config.S3_PREFIX}` : ''}`,
      )
      const { S3ObjectStore } = await import('../adapters/s3/s3-object-store.ts')
      return new S3ObjectStore({
        bucket,
        ...(config.S3_PREFIX === undefined ? {} : { prefix: config.S3_PREFIX }),
        ...(config.S3_REGION === undefined ? {} : { region: config.S3_REGION }),
        ...(config.S3_ENDPOINT === undefined ? {} : { endpoint: config.S3_ENDPOINT }),
        ...(config.S3_FORCE_PATH_STYLE === undefined
          ? {}
          : { forcePathStyle: config.S3_FORCE_PATH_STYLE }),
        deadline: ioDeadline(config, config.TURNLINE_STORAGE_TIMEOUT_MS ?? 5_000),
        credentials,
        ...(options.fetch ? { fetch: options.fetch } : {}),
        ...(options.sigv4Hashes ? { hashes: options.sigv4Hashes } : {}),
      })
    }
    case 'fs': {
      if (!options.defaultStore) {
        throw new ConfigError([
          'TURNLINE_STORE: fs is not available in this runtime; set S3_BUCKET (or TURNLINE_STORE=memory for a throwaway store)',
        ])
      }
      notices.push(`sessions in ${config.TURNLINE_DATA_DIR} (filesystem)`)
      return options.defaultStore(config.TURNLINE_DATA_DIR)
    }
    case 'memory':
      notices.push(
        `${config.TURNLINE_STORE === undefined ? 'no S3_BUCKET' : 'TURNLINE_STORE=memory'}: ` +
          'sessions live in this process and are lost on restart',
      )
      return new MemoryObjectStore()
    default:
      throw new ConfigError([
        'S3_BUCKET: this runtime has no filesystem store; set S3_BUCKET (or TURNLINE_STORE=memory for a throwaway store)',
      ])
  }
}
