import { startWorkerd } from '../support/runtimes.ts'
import { smokeScenario } from './smoke-scenario.ts'

/** No S3 or Upstash bindings: the Worker falls back to the memory adapters by itself. */
smokeScenario('workerd', (vars) => startWorkerd(vars))
