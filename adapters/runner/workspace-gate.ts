import { Refusal } from './refusal.ts'

/**
 * Workspaces closed to new commands while they are erased (workspace-eraser.ts), by
 * `<tenant>/<session>`; counted, so two erases at once each close and reopen it.
 */
export class WorkspaceGate {
  readonly #closed = new Map<string, number>()

  close(workspace: string): void {
    this.#closed.set(workspace, (this.#closed.get(workspace) ?? 0) + 1)
  }

  reopen(workspace: string): void {
    const left = (this.#closed.get(workspace) ?? 1) - 1
    if (left > 0) this.#closed.set(workspace, left)
    else this.#closed.delete(workspace)
  }

  /** Refuses (409 conflict) a command start in a workspace being erased. */
  admit(workspace: string): void {
    if (this.#closed.has(workspace)) {
      throw new Refusal('conflict', 'the workspace is being erased; no command starts in it')
    }
  }
}
