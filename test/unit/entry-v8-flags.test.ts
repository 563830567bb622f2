import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * The V8 flags the Node and Lambda entries set before their app's modules load
 * (packed-array-results.ts, regexp-backtracking.ts). `setFlagsFromString` leaves no trace a
 * program can read back (not `process.execArgv`, not `v8.getHeapStatistics`), so the entries
 * are checked by their source, as architecture.test.ts checks files: the two calls come first,
 * and the Lambda entry imports nothing else before them. What the array flag does is checked in
 * a child process with V8's test-only natives syntax (never in a server): an optimised `map`'s
 * result is packed with it, holey without it — a flag name V8 dropped would be ignored silently.
 */

const ROOT = path.resolve(import.meta.dirname, '../..')
const FLAG_CALLS = ['limitRegExpBacktracking', 'keepArrayResultsPacked']

/** The entry's top-level statements, its imports' module names apart. */
function entryStatements(file: string): { imports: string[]; body: ts.Statement[] } {
  const source = ts.createSourceFile(
    file,
    readFileSync(path.join(ROOT, file), 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  )
  const imports: string[] = []
  const body: ts.Statement[] = []
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      imports.push(statement.moduleSpecifier.text)
    } else body.push(statement)
  }
  return { imports, body }
}

/** The name a statement calls, when it is a bare call (`f()`). */
function calledName(statement: ts.Statement | undefined): string | undefined {
  if (!statement || !ts.isExpressionStatement(statement)) return undefined
  const call = statement.expression
  if (!ts.isCallExpression(call) || !ts.isIdentifier(call.expression)) return undefined
  return call.expression.text
}

/** Whether an optimised `arr.map(…)` returns a holey array, in a child Node process. */
function optimisedMapIsHoley(withFlag: boolean): boolean {
  const flagModule = pathToFileURL(path.join(ROOT, 'functions/entries/packed-array-results.ts'))
  // Natives syntax in a Function body: tsx does not compile it, V8 parses it with the flag.
  const script = `
    ${withFlag ? `(await import(${JSON.stringify(flagModule.href)})).keepArrayResultsPacked()` : ''}
    const probe = new Function(\`
      const f = (a) => a.map((x) => x + 1);
      %PrepareFunctionForOptimization(f);
      f([1, 2, 3]); f([1, 2, 3]);
      %OptimizeFunctionOnNextCall(f);
      const r = f([1, 2, 3]);
      return { optimised: %ActiveTierIsTurbofan(f), holey: %HasHoleyElements(r) };\`)
    console.log(JSON.stringify(probe()))`
  const child = spawnSync(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script],
    { cwd: ROOT, encoding: 'utf8' },
  )
  expect(child.status, child.stderr).toBe(0)
  const result = JSON.parse(child.stdout) as { optimised: boolean; holey: boolean }
  expect(result.optimised).toBe(true)
  return result.holey
}

describe("the entries' V8 flags", () => {
  it.each(['functions/entries/node.ts', 'functions/entries/lambda.ts'])(
    '%s sets them in its first statements',
    (file) => {
      const { body } = entryStatements(file)
      expect(body.slice(0, FLAG_CALLS.length).map(calledName).sort()).toEqual(
        [...FLAG_CALLS].sort(),
      )
    },
  )

  it('the Lambda entry imports nothing but the flags before them (its handlers after)', () => {
    const { imports, body } = entryStatements('functions/entries/lambda.ts')
    expect(imports.sort()).toEqual(['./packed-array-results.ts', './regexp-backtracking.ts'])
    expect(body.slice(FLAG_CALLS.length).map((s) => s.getText())).toEqual([
      expect.stringContaining("await import('./lambda-handlers.ts')"),
    ])
  })

  it("keeps an optimised map's result packed; without it the result is holey", () => {
    expect(optimisedMapIsHoley(false)).toBe(true)
    expect(optimisedMapIsHoley(true)).toBe(false)
  })
})
