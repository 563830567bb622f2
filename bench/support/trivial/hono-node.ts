import { serve } from '@hono/node-server'
import { trivialApp } from './hono-app.ts'

/** The trivial Hono app on Node (`node --import tsx … ` or tsx), on PORT. */
serve({ fetch: trivialApp.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT) })
