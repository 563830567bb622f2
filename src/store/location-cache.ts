/**
 * Where a process has found sessions (tenant and id → workspace), as their id pointers say:
 * pointers are create-only and immutable, so an entry holds for the life of the process, until
 * the session is deleted. The session locator fills it; the session store drops an entry when a
 * read finds its session gone, deleted by another process or by retention, so later reads look
 * the pointer up (404 as for an unknown id) instead of reading the deleted folder each time.
 * Past `capacity` entries it starts over.
 */
export class LocationCache {
  private readonly entries = new Map<string, string>()

  constructor(private readonly capacity = 4096) {}

  get(tenant: string, sessionId: string): string | undefined {
    return this.entries.get(`${tenant}/${sessionId}`)
  }

  set(tenant: string, sessionId: string, workspace: string): void {
    if (this.entries.size >= this.capacity) this.entries.clear()
    this.entries.set(`${tenant}/${sessionId}`, workspace)
  }

  delete(tenant: string, sessionId: string): void {
    this.entries.delete(`${tenant}/${sessionId}`)
  }
}
