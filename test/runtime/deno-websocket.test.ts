import { startDeno } from '../support/runtimes.ts'
import { socketScenario } from './socket-scenario.ts'

/** Deno's WebSocket server API (`Deno.upgradeWebSocket`), on the memory adapters. */
socketScenario('Deno', (vars) => startDeno({ TURNLINE_STORE: 'memory', ...vars }))
