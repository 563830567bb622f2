import { truncateText } from '../orientation/artifact-summaries.ts'

/**
 * The verifier sub-agent's instructions and task (after VT Code's read-only verifier agent):
 * re-read every affected file, check correctness, safety, conventions and completeness, and
 * answer with an explicit decision. The verdict is read fail-closed: only an explicit approval
 * with no issues approves; a rejection, an ambiguous answer or no answer rejects.
 */
export const VERIFIER_INSTRUCTIONS = [
  'You verify a change another agent proposed. You share nothing with that agent: judge only',
  'what is in the workspace now. You are strictly read-only: read files, never change them.',
  '',
  'Read every affected file in full. Check that the change does what it claims, has no logic',
  'errors or missing edge cases, keeps existing invariants, handles errors, introduces nothing',
  'unsafe, follows the conventions of the surrounding code, and is complete (related files,',
  'tests, docs). When in doubt, reject and say why.',
  '',
  'Answer in exactly this form:',
  '',
  '## Verification Result',
  '',
  '**Decision:** APPROVE or REJECT',
  '',
  '**Issues Found:**',
  '1. [critical|warning|info] path: what is wrong',
  '(or "None")',
  '',
  '**Reasoning:** why you approve or reject',
].join('\n')

export function verifierTask(input: {
  paths: readonly string[]
  description?: string | undefined
  turnId?: string | undefined
  deleted?: readonly string[]
}): string {
  const description =
    input.description ??
    (input.turnId
      ? `The changes the proposing agent made to the workspace in its ${input.turnId}.`
      : 'Changes the proposing agent made to the workspace.')
  const files = input.paths.map((path) =>
    input.deleted?.includes(path) ? `- ${path} (deleted: confirm it is gone)` : `- ${path}`,
  )
  return [
    'Verify the following proposed change.',
    '',
    '## Diff Description',
    description,
    '',
    '## Affected Files',
    ...files,
    '',
    'Read each affected file and check for correctness, safety, and convention adherence.',
    'Respond with your verification result in the format specified in your instructions.',
  ].join('\n')
}

export interface Verdict {
  approved: boolean
  issues: string[]
  reasoning: string
}

const NONE = /^(none|n\/a|no issues( found)?)\.?$/i

/** Reads the verifier's answer; fail-closed. */
export function parseVerdict(answer: string | undefined): Verdict {
  const text = answer?.trim() ?? ''
  if (text === '') {
    return { approved: false, issues: ['The verifier gave no answer.'], reasoning: '' }
  }
  // One class between the label and the word: adjacent optional runs (`\s*:?\s*\*{0,2}\s*`)
  // backtrack cubically over a long run of spaces (4,000 took 30 s).
  const decision = /decision[\s:*]*(approve[sd]?|reject(?:ed|s)?)/i.exec(text)
  const issues: string[] = []
  for (const raw of issuesSection(text).split('\n')) {
    const line = raw.replace(/^\s*(?:\d+[.)]|[-*])\s*/, '').trim()
    if (line !== '' && !NONE.test(line) && /^\s*(?:\d+[.)]|[-*])/.test(raw)) issues.push(line)
  }
  const reasoning = /\*{0,2}reasoning:?\*{0,2}:?\s*([\s\S]*)$/i.exec(text)?.[1]?.trim() ?? text
  const said = decision?.[1]?.toLowerCase()
  const explicitReject = said?.startsWith('reject') ?? /\breject(ed)?\b/i.test(text)
  const explicitApprove =
    said?.startsWith('approve') ?? /\b(approved|verification passed)\b/i.test(text)
  const approved = !explicitReject && explicitApprove && issues.length === 0
  return {
    approved,
    issues:
      !approved && issues.length === 0
        ? [
            explicitReject
              ? 'The verifier rejected the change.'
              : 'The verifier gave no explicit approval.',
          ]
        : issues,
    reasoning: truncateText(reasoning, 4000),
  }
}

/**
 * The text after the `Issues:` label (bold and colons allowed) up to a line that starts the
 * reasoning (`\n`, spaces, up to two `*`, `reasoning`) or the end; '' without the label. Found by
 * scanning, not by one lazy pattern: `[\s\S]*?(?:\n\s*…|$)` is quadratic in a run of newlines.
 */
function issuesSection(text: string): string {
  const label = /\*{0,2}issues(?: found)?:?\*{0,2}:?/i.exec(text)
  if (!label) return ''
  const start = label.index + label[0].length
  const heading = /\*{0,2}reasoning/gi
  heading.lastIndex = start
  for (let match = heading.exec(text); match; match = heading.exec(text)) {
    let space = match.index
    while (space > start && /\s/.test(text[space - 1] as string)) space--
    const newline = text.indexOf('\n', space)
    if (newline >= 0 && newline < match.index) return text.slice(start, newline)
  }
  return text.slice(start)
}
