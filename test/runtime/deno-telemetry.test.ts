import { startDeno } from '../support/runtimes.ts'
import { telemetryScenario } from './telemetry-scenario.ts'

/**
 * Tracing in Deno with the deno.json task's permissions (Node's build of the OTLP exporter),
 * traces asked for as OTLP/JSON, so the JSON exporter stays covered beside the protobuf default.
 */
telemetryScenario('deno', (vars) => startDeno({ TURNLINE_STORE: 'memory', ...vars }), {
  sdkLanguage: 'nodejs',
  flushEachRequest: false,
  encoding: 'json',
})
