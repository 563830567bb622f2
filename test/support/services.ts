/**
 * Coordinates of the real local services (moto_server for S3, redis-server) that `npm test`
 * starts through infra/local/run-tests.mjs and hands to the test processes as environment
 * variables. Running one vitest file by hand works too after `npm run services:start`: then the
 * coordinates come from .tmp/services.json. Tests never skip: with no services this throws.
 */
import { readFileSync } from 'node:fs'
import * as z from 'zod'

export interface TestS3 {
  endpoint: string
  region: string
  accessKeyId: string
  secretAccessKey: string
}

export interface TestServices {
  s3: TestS3
  redisUrl: string
}

const ENV = {
  endpoint: 'TURNLINE_TEST_S3_ENDPOINT',
  region: 'TURNLINE_TEST_S3_REGION',
  accessKeyId: 'TURNLINE_TEST_S3_ACCESS_KEY_ID',
  secretAccessKey: 'TURNLINE_TEST_S3_SECRET_ACCESS_KEY',
  redisUrl: 'TURNLINE_TEST_REDIS_URL',
} as const

const StateFile = z.object({
  s3: z.object({
    endpoint: z.url(),
    region: z.string().min(1),
    accessKeyId: z.string().min(1),
    secretAccessKey: z.string().min(1),
  }),
  redis: z.object({ url: z.string().startsWith('redis://') }),
  pids: z.record(z.string(), z.number().int().positive()),
})

const stateFileUrl = new URL('../../.tmp/services.json', import.meta.url)

function fromEnv(): TestServices | string[] {
  const value = (key: keyof typeof ENV) => process.env[ENV[key]] ?? ''
  const missing = Object.values(ENV).filter((name) => !process.env[name])
  if (missing.length > 0) return missing
  return {
    s3: {
      endpoint: value('endpoint'),
      region: value('region'),
      accessKeyId: value('accessKeyId'),
      secretAccessKey: value('secretAccessKey'),
    },
    redisUrl: value('redisUrl'),
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The services recorded by `npm run services:start`, or why they cannot be used. */
function fromStateFile(): TestServices | string {
  let raw: string
  try {
    raw = readFileSync(stateFileUrl, 'utf8')
  } catch {
    return 'and there is no .tmp/services.json'
  }
  const parsed = StateFile.safeParse(JSON.parse(raw))
  if (!parsed.success) return `and .tmp/services.json is malformed: ${parsed.error.message}`
  const dead = Object.entries(parsed.data.pids).filter(([, pid]) => !isAlive(pid))
  if (dead.length > 0) {
    return `and .tmp/services.json is stale (${dead.map(([name]) => name).join(', ')} not running)`
  }
  return { s3: parsed.data.s3, redisUrl: parsed.data.redis.url }
}

let cached: TestServices | undefined

/** The local services' coordinates; throws a clear Error when they are not running. */
export function requireServices(): TestServices {
  if (cached) return cached
  const env = fromEnv()
  if (!Array.isArray(env)) {
    cached = env
    return env
  }
  const state = fromStateFile()
  if (typeof state !== 'string') {
    cached = state
    return state
  }
  throw new Error(
    `S3 emulator and redis-server not running: ${env.join(', ')} unset ${state}. ` +
      'Run the tests with `npm test` (it starts them), or start them with ' +
      '`npm run services:start` (found then through .tmp/services.json), or export the ' +
      'variables that `node infra/local/services.mjs env` prints.',
  )
}
