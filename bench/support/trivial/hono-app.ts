import { Hono } from 'hono'

/**
 * The floor of bench/cold-start-platforms.ts: a trivial Hono app that answers a POST with the
 * JSON it got, on the same runtime as Turnline's entry.
 */
export const trivialApp = new Hono().post('*', async (c) => c.json({ echo: await c.req.json() }))

export default { fetch: trivialApp.fetch }
