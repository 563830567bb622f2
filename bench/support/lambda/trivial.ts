import { streamHandle } from 'hono/aws-lambda'
import { trivialApp } from '../trivial/hono-app.ts'

/** The trivial Hono app (trivial/hono-app.ts) as a streaming Lambda handler, as Turnline's is. */
export const handler = streamHandle(trivialApp)
