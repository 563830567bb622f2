// The trivial Hono app on plain Node (no tsx): the floor of the built server's cold start.
import { serve } from '@hono/node-server'
import { Hono } from 'hono'

const app = new Hono().post('*', async (c) => c.json({ echo: await c.req.json() }))
serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT) })
