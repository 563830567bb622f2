import { streamHandle } from 'hono/aws-lambda'
import { sameWorkApp } from '../same-work/app.ts'

/**
 * The same-work app (same-work/app.ts: the raw loop's one turn, its session file appended and
 * fsynced under TURNLINE_DATA_DIR, the function's /tmp) as a streaming Lambda handler.
 */
export const handler = streamHandle(sameWorkApp)
