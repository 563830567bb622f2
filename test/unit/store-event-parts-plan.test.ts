import { describe, expect, it } from 'vitest'
import { planParts } from '../../src/store/event-parts.ts'

/** Which parts a rollup lists and creates (store/event-parts.ts). */
describe('planParts', () => {
  it('adds the new part and leaves out parts before the head', () => {
    expect(
      planParts(
        [
          [0, 10],
          [10, 20],
        ],
        [20, 25],
        12,
      ),
    ).toEqual({
      parts: [
        [10, 20],
        [20, 25],
      ],
      created: [[20, 25]],
    })
  })

  it('joins a last part of less than a quarter of the new one (from the head on)', () => {
    const plan = planParts(
      [
        [0, 10],
        [10, 12],
      ],
      [12, 30],
      0,
    )
    expect(plan).toEqual({
      parts: [
        [0, 10],
        [10, 30],
      ],
      created: [[10, 30]],
    })
    expect(planParts([[0, 10]], [10, 30], 8)).toEqual({ parts: [[8, 30]], created: [[8, 30]] })
    // a bigger last part stays as it is
    expect(planParts([[0, 5]], [5, 25], 0).parts).toEqual([
      [0, 5],
      [5, 25],
    ])
  })

  it('beyond the most parts, merges the two smallest neighbours (from the head on)', () => {
    const plan = planParts(
      [
        [0, 10],
        [10, 12],
        [12, 13],
        [13, 30],
      ],
      [30, 40],
      5,
      4,
    )
    expect(plan.parts).toEqual([
      [0, 10],
      [10, 13],
      [13, 30],
      [30, 40],
    ])
    expect(plan.created).toEqual([
      [30, 40],
      [10, 13],
    ])
    const first = planParts(
      [
        [0, 10],
        [10, 11],
        [11, 30],
      ],
      [30, 40],
      8,
      3,
    )
    expect(first.parts).toEqual([
      [8, 11],
      [11, 30],
      [30, 40],
    ])
  })
})
