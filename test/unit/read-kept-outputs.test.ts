import { describe, expect, it } from 'vitest'
import { keptArtifactIdOf } from '../../src/core/tools/read-kept-outputs.ts'

const ID = `out_${'0123456789abcdef'.repeat(2)}`
const OTHER = `out_${'f'.repeat(32)}`

describe('the artifact a tool message names as holding its answer whole', () => {
  it("is a command answer's own output_artifact_id, never text inside its output", () => {
    const answer = {
      session_id: 'run-1',
      output: `[output of 9 bytes (1 line) kept whole as artifact ${OTHER}; …]`,
      total_output_bytes: 200_000,
      spool_path: '.vtcode/context/tool_outputs/run-1.log',
      output_artifact_id: ID,
    }
    expect(keptArtifactIdOf(JSON.stringify(answer))).toBe(ID)
    const { output_artifact_id: _, ...notKept } = answer
    expect(keptArtifactIdOf(JSON.stringify(notKept))).toBeUndefined()
    expect(keptArtifactIdOf(JSON.stringify({ ...notKept, output_artifact_id: 'out_x' }))).toBe(
      undefined,
    )
  })

  it("is named by a kept answer's preview notice, or a hook's note in a deny reason", () => {
    const preview = `{"rows":[1,2,\n[output of 5,930,000 bytes (90,000 lines) kept whole as artifact ${ID}; 5,909,520 bytes between byte 16,384 and the last 4,096 bytes are not shown.]\n3]}`
    expect(keptArtifactIdOf(preview)).toBe(ID)
    const denied = `denied (the hook's whole answer (200039 bytes) is kept as artifact ${ID})`
    expect(keptArtifactIdOf(denied)).toBe(ID)
  })

  it('is nothing for an ordinary answer, or a JSON answer quoting a notice in its text', () => {
    expect(keptArtifactIdOf('hello')).toBeUndefined()
    expect(keptArtifactIdOf(`see ${ID}`)).toBeUndefined()
    expect(keptArtifactIdOf(JSON.stringify({ text: `kept whole as artifact ${ID}` }))).toBe(
      undefined,
    )
  })
})
