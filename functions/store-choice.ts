import { MemoryObjectStore } from '../adapters/memory/memory-object-store.ts'
import type { ObjectStore } from '../src/ports/object-store.ts'
import { ConfigError, type EnvConfig, ioDeadline } from './env-config.ts'

interface StoreOptions {
  defaultStore?: ((dataDir: string) => ObjectStore) | undefined
  memoryStoreByDefault?: boolean | undefined
  /** No AWS credential chain (a Worker): S3 credentials must be configured. */
  s3KeysRequired?: boolean | undefined
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
 * The S3 adapter (and the AWS SDK under it) is imported only when S3 is configured: loading it
 * costs a start on the filesystem store ≈ 0.1 s of CPU (docs/performance.md, cold start).
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
      if (options.s3KeysRequired && config.S3_ACCESS_KEY_ID === undefined) {
        throw new ConfigError([
          'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: required with S3_BUCKET here; this runtime ' +
            'has no other source of S3 credentials (no environment or instance role to read)',
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
        ...(config.S3_ACCESS_KEY_ID && config.S3_SECRET_ACCESS_KEY
          ? {
              credentials: {
                accessKeyId: config.S3_ACCESS_KEY_ID,
                secretAccessKey: config.S3_SECRET_ACCESS_KEY,
              },
            }
          : {}),
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
