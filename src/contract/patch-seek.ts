/**
 * Where the lines of an `apply_patch` hunk occur in a file, searching forward: exactly, then
 * ignoring trailing whitespace, then ignoring surrounding whitespace, then with typographic
 * punctuation folded to ASCII (each level over the whole rest of the file before the next).
 *
 * Linear per search: every line is normalized once per level and given a number (equal lines,
 * equal numbers), and the hunk is found with Knuth–Morris–Pratt over those numbers — comparing
 * the hunk at every position is file × hunk lines, and a file of repeated lines makes every
 * comparison run long. A patch of many hunks still searches the rest of the file once per hunk
 * and level in the worst case (a hunk that matches only loosely), so the searches of one patch
 * share a budget of steps proportional to the file and the patch ({@link searchBudget}); past it
 * the patch fails with a message instead of holding the process.
 */

/** Steps every patch may take, whatever its size. */
export const SEARCH_BASE_STEPS = 50_000_000
/** Further steps per line of the file and of the hunks. */
export const SEARCH_STEPS_PER_LINE = 64

export function searchBudget(fileLines: number, hunkLines: number): number {
  return SEARCH_BASE_STEPS + SEARCH_STEPS_PER_LINE * (fileLines + hunkLines)
}

/** The search took more steps than the patch's budget allows. */
export class SearchBudgetExceeded extends Error {}

const NORMALIZERS: ReadonlyArray<(line: string) => string> = [
  (s) => s,
  (s) => s.trimEnd(),
  (s) => s.trim(),
  (s) => fold(s.trim()),
]

export class LineFinder {
  readonly #lines: readonly string[]
  readonly #views: Array<{ ids: Map<string, number>; lines: Int32Array } | undefined> = []
  #steps: number

  constructor(lines: readonly string[], budget: number) {
    this.#lines = lines
    this.#steps = budget
  }

  /**
   * Index where `pattern` occurs at or after `from` (-1 when nowhere). With `eof`, the position
   * that ends the file is tried first at each level. Throws {@link SearchBudgetExceeded}.
   */
  seek(pattern: readonly string[], from: number, eof: boolean): number {
    const lines = this.#lines
    if (pattern.length > lines.length) return -1
    const last = lines.length - pattern.length
    if (pattern.length === 0) return eof && last >= from ? last : from <= last ? from : -1
    for (let level = 0; level < NORMALIZERS.length; level++) {
      const view = this.#view(level)
      const normalize = NORMALIZERS[level] as (line: string) => string
      const want = new Int32Array(pattern.length)
      let absent = false
      for (let i = 0; i < pattern.length; i++) {
        const id = view.ids.get(normalize(pattern[i] as string))
        if (id === undefined) absent = true
        want[i] = id ?? -1
      }
      // A line the file does not have (at this level) cannot match anywhere.
      if (absent) continue
      if (eof && last >= from && this.#equalAt(view.lines, want, last)) return last
      const at = this.#search(view.lines, want, from)
      if (at >= 0) return at
    }
    return -1
  }

  /** The file's lines as numbers at one level, made on first use. */
  #view(level: number): { ids: Map<string, number>; lines: Int32Array } {
    const known = this.#views[level]
    if (known) return known
    const normalize = NORMALIZERS[level] as (line: string) => string
    const ids = new Map<string, number>()
    const lines = new Int32Array(this.#lines.length)
    for (let i = 0; i < this.#lines.length; i++) {
      const key = normalize(this.#lines[i] as string)
      let id = ids.get(key)
      if (id === undefined) {
        id = ids.size
        ids.set(key, id)
      }
      lines[i] = id
    }
    const view = { ids, lines }
    this.#views[level] = view
    return view
  }

  #equalAt(lines: Int32Array, want: Int32Array, at: number): boolean {
    this.#spend(want.length)
    for (let i = 0; i < want.length; i++) if (lines[at + i] !== want[i]) return false
    return true
  }

  /** Knuth–Morris–Pratt: the first index ≥ from where `want` occurs, or -1. */
  #search(lines: Int32Array, want: Int32Array, from: number): number {
    const m = want.length
    this.#spend(m)
    const fallback = new Int32Array(m)
    for (let i = 1, k = 0; i < m; i++) {
      while (k > 0 && want[i] !== want[k]) k = fallback[k - 1] as number
      if (want[i] === want[k]) k++
      fallback[i] = k
    }
    let matched = 0
    for (let j = from; j < lines.length; j++) {
      // Amortized: each step advances j or shrinks `matched`, so 2 per line bounds both.
      this.#spend(2)
      while (matched > 0 && lines[j] !== want[matched]) matched = fallback[matched - 1] as number
      if (lines[j] === want[matched]) matched++
      if (matched === m) return j - m + 1
    }
    return -1
  }

  #spend(steps: number): void {
    this.#steps -= steps
    if (this.#steps < 0) throw new SearchBudgetExceeded()
  }
}

function fold(s: string): string {
  return s
    .replace(/[\u2010-\u2015\u2212]/g, '-')
    .replace(/[\u2018\u2019\u201A\u201B]/g, "'")
    .replace(/[\u201C\u201D\u201E\u201F]/g, '"')
    .replace(/[\u00A0\u2002-\u200A\u202F\u205F\u3000]/g, ' ')
}
