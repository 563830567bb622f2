import { TurnlineError } from '../../src/contract/errors.ts'
import type { AgentLayerApi } from '../../src/core/agent-layer/agent-layer-api.ts'

const absent = (what: string) =>
  Promise.reject(new TurnlineError('not_found', `${what} is not in the fake session API`))

/**
 * The agent-layer face of the fake session API: every call is recorded and answered not_found
 * (the real engine behind the app is tested in test/integration/agent-*.test.ts).
 */
export class FakeAgentLayer implements AgentLayerApi {
  /** Agent-layer calls with their arguments, in order. */
  readonly agentCalls: { method: string; args: unknown[] }[] = []

  private record(method: string, args: unknown[]) {
    this.agentCalls.push({ method, args })
    return absent(method)
  }

  getOutputArtifact(...args: Parameters<AgentLayerApi['getOutputArtifact']>) {
    return this.record('getOutputArtifact', args) as ReturnType<AgentLayerApi['getOutputArtifact']>
  }
  listKeptOutputs(...args: Parameters<AgentLayerApi['listKeptOutputs']>) {
    return this.record('listKeptOutputs', args) as ReturnType<AgentLayerApi['listKeptOutputs']>
  }
  listArtifacts(...args: Parameters<AgentLayerApi['listArtifacts']>) {
    return this.record('listArtifacts', args) as ReturnType<AgentLayerApi['listArtifacts']>
  }
  getArtifact(...args: Parameters<AgentLayerApi['getArtifact']>) {
    return this.record('getArtifact', args) as ReturnType<AgentLayerApi['getArtifact']>
  }
  putArtifact(...args: Parameters<AgentLayerApi['putArtifact']>) {
    return this.record('putArtifact', args) as ReturnType<AgentLayerApi['putArtifact']>
  }
  appendArtifact(...args: Parameters<AgentLayerApi['appendArtifact']>) {
    return this.record('appendArtifact', args) as ReturnType<AgentLayerApi['appendArtifact']>
  }
  deleteArtifact(...args: Parameters<AgentLayerApi['deleteArtifact']>) {
    return this.record('deleteArtifact', args) as ReturnType<AgentLayerApi['deleteArtifact']>
  }
  getOrientation(...args: Parameters<AgentLayerApi['getOrientation']>) {
    return this.record('getOrientation', args) as ReturnType<AgentLayerApi['getOrientation']>
  }
  handoff(...args: Parameters<AgentLayerApi['handoff']>) {
    return this.record('handoff', args) as ReturnType<AgentLayerApi['handoff']>
  }
  createLoop(...args: Parameters<AgentLayerApi['createLoop']>) {
    return this.record('createLoop', args) as ReturnType<AgentLayerApi['createLoop']>
  }
  getLoop(...args: Parameters<AgentLayerApi['getLoop']>) {
    return this.record('getLoop', args) as ReturnType<AgentLayerApi['getLoop']>
  }
  stepLoop(...args: Parameters<AgentLayerApi['stepLoop']>) {
    return this.record('stepLoop', args) as ReturnType<AgentLayerApi['stepLoop']>
  }
  verify(...args: Parameters<AgentLayerApi['verify']>) {
    return this.record('verify', args) as ReturnType<AgentLayerApi['verify']>
  }
}
