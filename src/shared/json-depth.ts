/**
 * Whether a parsed JSON value nests objects and lists deeper than `max` levels (the outermost
 * container is level 1). Walked with a stack of its own, no recursion, so any depth is measured
 * without overflowing; linear in the value. For values parsed from text a client or a model
 * wrote, before anything recursive (a schema's validator, zod, JSON.stringify) walks them.
 */
export function nestedDeeperThan(root: unknown, max: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value: root, depth: 0 }]
  while (stack.length > 0) {
    const { value, depth } = stack.pop() as { value: unknown; depth: number }
    if (typeof value !== 'object' || value === null) continue
    if (depth >= max) return true
    const children = Array.isArray(value) ? value : Object.values(value)
    for (const child of children) {
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, depth: depth + 1 })
    }
  }
  return false
}
