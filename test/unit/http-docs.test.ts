import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { fullApp } from '../support/openapi-app.ts'

/** docs/http-api.md names every path of the OpenAPI document (its route table). */
describe('docs/http-api.md', () => {
  it('documents every OpenAPI path', async () => {
    const doc = readFileSync(new URL('../../docs/http-api.md', import.meta.url), 'utf8')
    const res = await fullApp().request('/v1/openapi.json')
    const paths = Object.keys(((await res.json()) as { paths: object }).paths)
    expect(paths.length).toBeGreaterThan(20)
    expect(paths.filter((path) => !doc.includes(`\`${path}\``))).toEqual([])
  })
})
