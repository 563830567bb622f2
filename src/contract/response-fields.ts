import * as z from 'zod'
import { lazySchema } from './lazy-schema.ts'

/**
 * The response bodies of the HTTP API (v1) are zod schemas, each written once in a
 * `*-responses.ts` file of its routes (`error-responses.ts`, `turn-responses.ts`,
 * `session-responses.ts`, `session-view-response.ts`, `budget-report.ts`,
 * `agent-session-responses.ts`, `loop-responses.ts`, `resource-responses.ts`,
 * `background-responses.ts`): the OpenAPI document is generated from them (closed objects, so
 * that test/integration/http-openapi-answers.test.ts, which checks real answers against the
 * document, catches an undocumented field); the service builds them as the TypeScript types next
 * to each (api.ts, artifacts.ts, loop-state.ts …); the typed client reads answers with tolerant
 * copies of them (`wire-responses.ts`). Here: the fields they share.
 */

/** A count or a position: an integer ≥ 0. */
export const Count = lazySchema(() => z.number().int().nonnegative())
/** An id, described. */
export const Id = (description: string) => z.string().describe(description)
