import { AsyncLocalStorage } from 'node:async_hooks'
import { Hono } from 'hono'
import { MemoryObjectStore } from '../../adapters/memory/memory-object-store.ts'
import { serveApp } from '../../test/support/http-server.ts'
import type { Endpoints } from './turn-cost-scenario.ts'
import { inProcessVariant, type Variant } from './turnline-variants.ts'

/**
 * The `memory` variant with tracing on: OTEL_EXPORTER_OTLP_ENDPOINT names a sink on loopback
 * that answers every export 200, so every span and metric is made, encoded and sent as a
 * collector would get them. Run beside `memory` (`--variants memory,traced`) it shows what
 * tracing costs a turn when it is on; `--before` a revision from before tracing shows what it
 * costs when it is off (docs/observability.md).
 */
export async function tracedVariant(scenario: Endpoints, dataDir: string): Promise<Variant> {
  let exports = 0
  const sink = await serveApp(
    new Hono().post('*', (c) => {
      exports += 1
      return c.body(null, 200)
    }),
  )
  const variant = await inProcessVariant(
    'in-process, memory adapters, traced',
    scenario,
    new MemoryObjectStore(),
    dataDir,
    {
      deployment: {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
          OTEL_SERVICE_NAME: 'turnline-bench',
          // Exports go out while the bench runs, not after it.
          OTEL_BSP_SCHEDULE_DELAY: '100',
          OTEL_METRIC_EXPORT_INTERVAL: '1000',
        },
        options: { contextStorage: () => new AsyncLocalStorage() },
      },
      close: async () => {
        // Proof that it traced: a run with no export measured nothing.
        process.stderr.write(`traced variant: ${exports} OTLP exports received\n`)
        if (exports === 0) throw new Error('the traced variant exported nothing')
        await sink.close()
      },
    },
  )
  return variant
}
