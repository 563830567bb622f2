/**
 * The scenario's model name and its one tool as a Chat Completions tool definition
 * (bench/support/turn-cost-scenario.ts), apart from the mock and the receiver: the raw loop's
 * turn (raw-loop.ts) needs only these, and the same-work app of bench/cold-start-platforms.ts,
 * which runs that turn, loads nothing more.
 */

export const MODEL = 'gpt-4o-mini'

/** The tool `lookup` as the raw loop sends it (turn-cost-scenario.ts's lookupTool for Turnline). */
export const lookupFunction = {
  type: 'function' as const,
  function: {
    name: 'lookup',
    description: 'Look a thing up',
    parameters: {
      type: 'object',
      properties: { q: { type: 'string' } },
      required: ['q'],
      additionalProperties: false,
    },
  },
}
