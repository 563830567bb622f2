import { startDeno } from '../support/runtimes.ts'
import { smokeScenario } from './smoke-scenario.ts'

/** Deno on the memory adapters (the embedded fs default is the Node entry's to test). */
smokeScenario('Deno', (vars) => startDeno({ TURNLINE_STORE: 'memory', ...vars }))
