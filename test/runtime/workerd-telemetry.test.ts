import { startWorkerd } from '../support/runtimes.ts'
import { telemetryScenario } from './telemetry-scenario.ts'

/**
 * Tracing in workerd, the Worker bundle as deployed: the Web build of the OTLP protobuf
 * exporter, the default encoding.
 */
telemetryScenario('workerd', (vars) => startWorkerd(vars), {
  sdkLanguage: 'webjs',
  flushEachRequest: true,
  encoding: 'protobuf',
})
