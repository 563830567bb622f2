import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MockOpenAI, startMockOpenAI } from '../support/mock-openai.ts'
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts'
import type { RuntimeProcess } from '../support/runtime-process.ts'
import { runTracedTurn, startTracedTool, TRACE_ID, TRACED_MODEL } from '../support/turn-trace.ts'
import { until } from '../support/until.ts'

/**
 * OpenTelemetry in a runtime entry's own process: the OTEL_* variables as its environment (Worker
 * vars in workerd), a real OTLP/HTTP receiver, and a turn with a tool call that must arrive as
 * one trace under the caller's span (test/support/turn-trace.ts), then the metrics. An isolate
 * runtime (`flushEachRequest`) gets a batch delay of an hour, so the spans can arrive only
 * through the flush it hands to `ctx.waitUntil` as each request ends — an isolate runs no timer
 * once its requests are done; a long-running one exports on its batch timer.
 */
export function telemetryScenario(
  name: string,
  start: (vars: Record<string, string>) => Promise<RuntimeProcess>,
  expected: {
    sdkLanguage: 'webjs' | 'nodejs'
    flushEachRequest: boolean
    /** The trace encoding: protobuf is the default, JSON is asked for. */
    encoding: 'protobuf' | 'json'
  },
): void {
  describe(`OpenTelemetry in ${name}`, () => {
    let mock: MockOpenAI
    let otlp: OtlpReceiver
    let tool: Awaited<ReturnType<typeof startTracedTool>>
    let runtime: RuntimeProcess

    beforeAll(async () => {
      mock = await startMockOpenAI()
      otlp = await startOtlpReceiver()
      tool = await startTracedTool()
      runtime = await start({
        TURNLINE_SINGLE_TENANT: '1',
        OPENAI_BASE_URL: mock.baseURL,
        OPENAI_API_KEY: 'test-key',
        TURNLINE_MODEL: TRACED_MODEL,
        TURNLINE_TOOL_ALLOWED_HOSTS: new URL(tool.url).host,
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_SERVICE_NAME: `turnline-${name}-test`,
        OTEL_BSP_SCHEDULE_DELAY: expected.flushEachRequest ? '3600000' : '50',
        OTEL_METRIC_EXPORT_INTERVAL: expected.flushEachRequest ? '3600000' : '100',
        ...(expected.encoding === 'json'
          ? { OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' }
          : {}),
      })
    }, 90_000)

    afterAll(async () => {
      await runtime?.stop()
      await tool?.close()
      await otlp?.close()
      await mock?.close()
    })

    it('exports a turn with a tool call as one trace under the caller span', async () => {
      await runTracedTurn(runtime.url, {
        mock,
        otlp,
        tool,
        serviceName: `turnline-${name}-test`,
        encoding: expected.encoding,
      }).catch((error: unknown) => {
        throw new Error(`${error}\n--- ${name} output ---\n${runtime.output()}`)
      })
      // The runtime's build of the exporter: fetch in a Worker, Node's http elsewhere.
      const request = otlp.spans.find((span) => span.traceId === TRACE_ID)
      expect(request?.resource['telemetry.sdk.language']).toBe(expected.sdkLanguage)
    })

    it('exports the metrics', async () => {
      const metrics = await until('the metrics', () =>
        otlp.metrics.has('gen_ai.client.token.usage') && otlp.metrics.has('turnline.turn.duration')
          ? otlp.metrics
          : undefined,
      )
      const tokens = metrics.get('gen_ai.client.token.usage')?.histogram?.dataPoints ?? []
      const input = tokens.find((p) => p.attributes['gen_ai.token.type'] === 'input')
      expect(input).toMatchObject({ count: 2, sum: 270 })
    })
  })
}
