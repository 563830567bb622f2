import { startWorkerd } from '../support/runtimes.ts'
import { socketScenario } from './socket-scenario.ts'

/** workerd's WebSocket server API (`WebSocketPair`), on the memory adapters. */
socketScenario('workerd', (vars) => startWorkerd(vars))
