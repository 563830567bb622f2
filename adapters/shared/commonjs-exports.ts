/**
 * The exports of a CommonJS package from a dynamic `import()`, on every runtime: Node's loader
 * gives them as named exports and as `default` (its module.exports), while the Lambda bundle puts
 * such a package in a chunk of its own whose only export is `default` — reading the named
 * exports there gave undefined (commit 9952acd: every SQS send of the Lambda bundle failed).
 */
export function commonJsExports<T extends object>(loaded: T): T {
  return (loaded as unknown as { default?: T }).default ?? loaded
}
