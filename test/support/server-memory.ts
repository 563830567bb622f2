import { readdirSync, readFileSync } from 'node:fs'
import type { TestS3 } from './services.ts'

/**
 * Peak resident bytes (VmHWM) of the largest process in a process group: the server that
 * `startNodeEntry` started (its child's pid is the group's id). Read before and after a step, the
 * difference is how much the step raised the server's peak.
 */
export function peakResident(group: number): number {
  let peak = 0
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) !== group) continue
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
      peak = Math.max(peak, Number(hwm?.[1] ?? 0) * 1024)
    } catch {
      // a process that ended while it was read
    }
  }
  return peak
}

/** The environment of `npm start` on S3 (moto) in `bucket`. */
export function s3StoreEnv(s3: TestS3, bucket: string): Record<string, string> {
  return {
    TURNLINE_STORE: 's3',
    S3_BUCKET: bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: s3.region,
    S3_FORCE_PATH_STYLE: '1',
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
  }
}
