/**
 * The call ids of one response's tool invocations: an invocation's raw `tool_call_id` on its
 * first use, else its item id (a provider may reuse an id across rounds; the response's call ids
 * must be unique). The same invocations always get the same ids.
 */
export function callIdAssigner(): (invocationId: string, raw: string | undefined) => string {
  const assigned = new Map<string, string>()
  const usedRaw = new Set<string>()
  return (invocationId, raw) => {
    const known = assigned.get(invocationId)
    if (known !== undefined) return known
    const id = raw !== undefined && !usedRaw.has(raw) ? raw : invocationId
    if (id === raw) usedRaw.add(raw)
    assigned.set(invocationId, id)
    return id
  }
}
