/** The parts of services.mjs that TypeScript callers use (tests that need services of their own). */
export interface LocalServices {
  s3: {
    endpoint: string
    region: string
    accessKeyId: string
    secretAccessKey: string
    /** The file moto notes each request in (startServices' `requestLog`). */
    requestLog?: string
  }
  redis: { url: string }
  pids: Record<string, number>
}

export const tmpDir: string

/**
 * Starts moto_server and redis-server and records them in `stateFile`; with `requestLog`, moto
 * notes each request in that file (moto-server-lean.py).
 */
export function startServices(options?: {
  stateFile?: string
  owner?: number | null
  requestLog?: string | null
}): Promise<LocalServices>

/** Stops the services recorded in `stateFile`; returns the names stopped. */
export function stopServices(stateFile?: string): Promise<string[]>
