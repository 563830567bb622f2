import { serve } from '@hono/node-server'
import { sameWorkApp } from './app.ts'

/** The same-work app on Node (through tsx, or bundled by esbuild onto plain node), on PORT. */
serve({ fetch: sameWorkApp.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT) })
