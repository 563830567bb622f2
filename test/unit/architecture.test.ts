import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

/**
 * The layout's rules (docs/architecture.md), checked on every run: which folder may import
 * which, no import cycles, no platform or SDK imports in src/ and client/, zod schemas only in
 * src/contract, files of at most 300 lines (schema files too), functions
 * in src/core of at most 60 lines unless their comment gives the reason (`Long: …`), and ports
 * that are interfaces (src/ports exports types and constants, no function or class).
 */

const ROOT = path.resolve(import.meta.dirname, '../..')
const SOURCE_ROOTS = ['src', 'adapters', 'functions', 'cli', 'client']

type Layer =
  | 'shared'
  | 'contract'
  | 'ports'
  | 'store'
  | 'core'
  | 'adapters'
  | 'functions'
  | 'client'
  | 'cli'
  | 'infra'

/** What each layer may import (besides itself). */
const ALLOWED: Record<Exclude<Layer, 'infra'>, readonly Layer[]> = {
  // what every layer shares, written once: plain functions on Web-standard globals
  shared: [],
  contract: ['shared'],
  ports: ['shared', 'contract'],
  store: ['shared', 'contract', 'ports'],
  core: ['shared', 'contract', 'ports', 'store'],
  adapters: ['shared', 'contract', 'ports'],
  functions: ['shared', 'contract', 'ports', 'store', 'core', 'adapters'],
  // the published client: the contract's schemas and nothing of the server
  client: ['shared', 'contract'],
  cli: ['shared', 'contract', 'ports', 'store', 'core', 'adapters', 'functions', 'client'],
}

/**
 * The one file of src/ports that exports functions: the Coordinator's argument rules, part of the
 * port's contract (every adapter — memory, Redis, the store's durable intents — refuses a bad
 * argument the same way), and the store's durable intents can import nothing the adapters share.
 */
const PORT_FUNCTION_FILES = ['src/ports/coordinator-checks.ts']

/** The faces of src/core that functions/ (and the CLI) may use. */
const CORE_FACES = ['src/core/session-api.ts', 'src/core/session-service.ts']

/** Packages src/ may import, by layer (everything else there must be Web-standard). */
const SRC_PACKAGES: Record<'shared' | 'contract' | 'ports' | 'store' | 'core', readonly string[]> =
  {
    shared: [],
    // standardwebhooks: plain JavaScript on Web-standard globals (TextEncoder, a JS SHA-256)
    contract: ['zod', 'standardwebhooks'],
    ports: [],
    store: [],
    core: ['gpt-tokenizer', '@cfworker/json-schema'],
  }

interface SourceFile {
  /** Repository-relative, with forward slashes. */
  file: string
  text: string
  imports: { specifier: string; typeOnly: boolean }[]
}

function walk(dir: string): string[] {
  const folder = path.join(ROOT, dir)
  if (!existsSync(folder)) return []
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(rel)
    return /\.(ts|mts|mjs|js)$/.test(entry.name) ? [rel] : []
  })
}

function read(file: string): SourceFile {
  const text = readFileSync(path.join(ROOT, file), 'utf8')
  const info = ts.preProcessFile(text, true, true)
  const imports = info.importedFiles.map(({ fileName, pos }) => ({
    specifier: fileName,
    typeOnly: isTypeOnlyStatement(text, pos),
  }))
  return { file, text, imports }
}

/** Whether the import/export statement containing `pos` is `import type …` / `export type …`. */
function isTypeOnlyStatement(text: string, pos: number): boolean {
  const start = Math.max(text.lastIndexOf('\nimport ', pos), text.lastIndexOf('\nexport ', pos))
  return /^\n?(import|export)\s+type\b/.test(text.slice(Math.max(start, 0), start + 20))
}

function layerOf(file: string): Layer | undefined {
  const [top, second] = file.split('/')
  if (top === 'src') {
    if (
      second === 'shared' ||
      second === 'contract' ||
      second === 'ports' ||
      second === 'store' ||
      second === 'core'
    ) {
      return second
    }
    return undefined
  }
  if (
    top === 'adapters' ||
    top === 'functions' ||
    top === 'client' ||
    top === 'cli' ||
    top === 'infra'
  ) {
    return top
  }
  return undefined
}

function resolveRelative(from: string, specifier: string): string {
  return path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier))
}

const files = SOURCE_ROOTS.flatMap(walk).map(read)

/** Longest function in src/core without a `Long:` reason in the comment before it. */
const MAX_FUNCTION_LINES = 60

function isFunctionWithBody(node: ts.Node): boolean {
  return (
    (ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isArrowFunction(node) ||
      ts.isFunctionExpression(node) ||
      ts.isConstructorDeclaration(node)) &&
    node.body !== undefined
  )
}

const lineOf = (source: ts.SourceFile, pos: number) =>
  source.getLineAndCharacterOfPosition(pos).line

/**
 * The comments before a function: its own, or those of the statement, property or argument
 * it is the value of (an arrow function assigned to a const, a method of an object literal).
 */
function leadingComment(node: ts.Node): string {
  const text = node.getSourceFile().getFullText()
  let comments = ''
  for (
    let at: ts.Node | undefined = node;
    at && !ts.isSourceFile(at) && !ts.isBlock(at);
    at = at.parent
  ) {
    for (const range of ts.getLeadingCommentRanges(text, at.getFullStart()) ?? []) {
      comments += `${text.slice(range.pos, range.end)}\n`
    }
  }
  return comments
}
const byName = new Map(files.map((f) => [f.file, f]))

describe('architecture', () => {
  it('finds the source tree', () => {
    expect(files.length).toBeGreaterThan(100)
    expect(byName.has('src/core/session-service.ts')).toBe(true)
  })

  it('imports only what each folder may import', () => {
    const problems: string[] = []
    for (const { file, imports } of files) {
      const layer = layerOf(file)
      if (layer === undefined || layer === 'infra') {
        problems.push(`${file}: outside every layer`)
        continue
      }
      for (const { specifier, typeOnly } of imports) {
        if (specifier.startsWith('.')) {
          const target = resolveRelative(file, specifier)
          const targetLayer = layerOf(target)
          if (targetLayer === undefined) {
            problems.push(`${file} → ${target}: not a source layer`)
          } else if (targetLayer !== layer && !ALLOWED[layer].includes(targetLayer)) {
            problems.push(`${file} → ${target}: ${layer} may not import ${targetLayer}`)
          } else if (targetLayer === 'core' && layer !== 'core' && !CORE_FACES.includes(target)) {
            problems.push(`${file} → ${target}: outside src/core use only ${CORE_FACES.join(', ')}`)
          } else if (layer === 'adapters' && targetLayer === 'adapters') {
            const own = file.split('/')[1]
            const folder = target.split('/')[1]
            if (folder !== own && (folder !== 'shared' || own === 'shared')) {
              problems.push(
                `${file} → ${target}: an adapter imports only its own folder and adapters/shared`,
              )
            }
          }
          continue
        }
        if (layer === 'client' && specifier !== 'zod') {
          problems.push(`${file} → ${specifier}: client/ imports no package but zod`)
        }
        if (file.startsWith('adapters/shared/')) {
          problems.push(`${file} → ${specifier}: adapters/shared/ imports no package`)
        }
        if (
          layer === 'shared' ||
          layer === 'contract' ||
          layer === 'ports' ||
          layer === 'store' ||
          layer === 'core'
        ) {
          const allowed = SRC_PACKAGES[layer]
          const isAllowed = allowed.some((p) => specifier === p || specifier.startsWith(`${p}/`))
          // core reads zod's types (z.ZodType) but parses only with schemas from src/contract
          const zodTypes = specifier === 'zod' && typeOnly && layer !== 'ports'
          if (!isAllowed && !zodTypes) {
            problems.push(`${file} → ${specifier}: src/${layer} may not import this package`)
          }
        }
      }
    }
    expect(problems).toEqual([])
  })

  it('uses no platform globals in src/, client/ and adapters/shared/', () => {
    const problems: string[] = []
    for (const { file, text } of files) {
      if (!/^(src|client|adapters\/shared)\//.test(file)) continue
      const code = text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
      for (const name of ['process', 'Deno', 'Buffer', 'require', '__dirname']) {
        if (new RegExp(`(?<![\\w.'"\`])${name}\\s*[.(\\[]`).test(code)) {
          problems.push(`${file}: uses ${name}`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  it('keeps zod schemas in src/contract', () => {
    const problems = files
      .filter(({ file }) => /^(src\/(shared|ports|store|core)|client)\//.test(file))
      .filter(({ text }) =>
        /\bz\.(object|strictObject|string|number|enum|array|union)\(/.test(text),
      )
      .map(({ file }) => file)
    expect(problems).toEqual([])
  })

  it('has no import cycles', () => {
    const graph = new Map<string, string[]>()
    for (const { file, imports } of files) {
      graph.set(
        file,
        imports
          .filter((i) => i.specifier.startsWith('.'))
          .map((i) => resolveRelative(file, i.specifier))
          .filter((target) => byName.has(target)),
      )
    }
    const cycles: string[] = []
    const state = new Map<string, 'visiting' | 'done'>()
    const stack: string[] = []
    const visit = (node: string) => {
      state.set(node, 'visiting')
      stack.push(node)
      for (const next of graph.get(node) ?? []) {
        const seen = state.get(next)
        if (seen === 'visiting') {
          cycles.push([...stack.slice(stack.indexOf(next)), next].join(' → '))
        } else if (seen === undefined) {
          visit(next)
        }
      }
      stack.pop()
      state.set(node, 'done')
    }
    for (const node of graph.keys()) if (!state.has(node)) visit(node)
    expect(cycles).toEqual([])
  })

  it('keeps files at most 300 lines, schema files included', () => {
    const problems: string[] = []
    for (const { file, text } of files) {
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
      if (lines > 300) problems.push(`${file}: ${lines} lines (limit 300)`)
    }
    expect(problems).toEqual([])
  })

  it("reads zod's core by named imports, not `z.core` or `z.locales` values (which keep every locale in a bundle)", () => {
    // A value read of the namespace keeps all of it: ≈ 40 locales, 400 KB more that each Node,
    // Deno and Worker start parses (docs/performance.md, cold start). Types (`z.core.$…`) are free.
    const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
    const reading = files
      .filter(({ text }) => /\bz\.core\.(?!\$)|\bz\.locales\b/.test(code(text)))
      .map(({ file }) => file)
    expect(reading).toEqual([])
  })

  it('admits every turn step and model call in one place', () => {
    const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
    const using = (pattern: RegExp) =>
      files
        .filter(({ file, text }) => !file.startsWith('client/') && pattern.test(code(text)))
        .map(({ file }) => file)
        .sort()
    const importers = (target: string) =>
      files
        .filter(({ file, imports }) =>
          imports.some(
            (i) => i.specifier.startsWith('.') && resolveRelative(file, i.specifier) === target,
          ),
        )
        .map(({ file }) => file)
        .sort()
    // Every model call is reserved and settled: only admittedModel asks for the model client.
    expect(using(/\.models\(/)).toEqual(['src/core/model/admitted-model.ts'])
    // The deployment's admission is met at the step gate and at each model call, nowhere else.
    expect(using(/\.admission\b/)).toEqual([
      'src/core/engine/admit-step.ts',
      'src/core/model/admitted-model.ts',
    ])
    // withLease admits every leased step; only ending a session (no model call) is let through.
    expect(using(/'never_refused'/)).toEqual([
      'src/core/engine/with-lease.ts',
      'src/core/session/end-session.ts',
    ])
    // A turn is driven only inside withLease's admitted work.
    expect(importers('src/core/turn/drive-turn.ts')).toEqual([
      'src/core/plan/approve-plan.ts',
      'src/core/turn/step-turn.ts',
    ])
    expect(importers('src/core/turn/turn-loop.ts')).toEqual(['src/core/turn/drive-turn.ts'])
  })

  it('keeps functions in src/core at most 60 lines, unless their comment says why (Long:)', () => {
    const problems: string[] = []
    for (const { file, text } of files) {
      if (!file.startsWith('src/core/')) continue
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
      const visit = (node: ts.Node): void => {
        if (isFunctionWithBody(node)) {
          const lines = lineOf(source, node.end) - lineOf(source, node.getStart(source)) + 1
          if (lines > MAX_FUNCTION_LINES && !/\bLong: \S/.test(leadingComment(node))) {
            problems.push(`${file}:${lineOf(source, node.getStart(source)) + 1}: ${lines} lines`)
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    expect(problems).toEqual([])
  })

  it('passes no bare boolean to a function in src/core (a named field says what it means)', () => {
    const problems: string[] = []
    for (const { file, text } of files) {
      if (!file.startsWith('src/core/')) continue
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
      const visit = (node: ts.Node): void => {
        if (isFunctionWithBody(node)) {
          for (const parameter of (node as ts.FunctionLikeDeclaration).parameters) {
            if (parameter.type?.kind === ts.SyntaxKind.BooleanKeyword) {
              const line = lineOf(source, parameter.getStart(source)) + 1
              problems.push(`${file}:${line}: ${parameter.name.getText(source)}: boolean`)
            }
          }
        }
        ts.forEachChild(node, visit)
      }
      visit(source)
    }
    expect(problems).toEqual([])
  })

  it('keeps src/ports to interfaces: its files export no function or class', () => {
    const problems: string[] = []
    for (const { file, text } of files) {
      if (!file.startsWith('src/ports/') || PORT_FUNCTION_FILES.includes(file)) continue
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
      for (const statement of source.statements) {
        const exported = ts
          .getModifiers(statement as ts.HasModifiers)
          ?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
        const isCode =
          ts.isFunctionDeclaration(statement) ||
          ts.isClassDeclaration(statement) ||
          (ts.isVariableStatement(statement) &&
            statement.declarationList.declarations.some(
              ({ initializer }) =>
                initializer !== undefined &&
                (ts.isArrowFunction(initializer) ||
                  ts.isFunctionExpression(initializer) ||
                  ts.isClassExpression(initializer)),
            ))
        if (exported && isCode) {
          problems.push(`${file}:${lineOf(source, statement.getStart(source)) + 1}`)
        }
      }
    }
    expect(problems).toEqual([])
  })

  it('has no file name twice under src/', () => {
    const seen = new Map<string, string[]>()
    for (const { file } of files) {
      if (!file.startsWith('src/')) continue
      const name = path.posix.basename(file)
      seen.set(name, [...(seen.get(name) ?? []), file])
    }
    const repeated = [...seen.values()].filter((list) => list.length > 1)
    expect(repeated).toEqual([])
  })
})
