import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { openApiJson } from '../../functions/openapi/openapi.ts'

/** docs/http-api.md names every path of the OpenAPI document (its route table). */
describe('docs/http-api.md', () => {
  it('documents every OpenAPI path', () => {
    const doc = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8')
    const paths = Object.keys((JSON.parse(openApiJson('test')) as { paths: object }).paths)
    expect(paths.length).toBeGreaterThan(20)
    expect(paths.filter((path) => !doc.includes(`\`${path}\``))).toEqual([])
  })
})
