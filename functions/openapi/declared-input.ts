import type { Context, MiddlewareHandler } from 'hono'
import { uniqueSymbol } from 'hono-openapi'
import type * as z from 'zod'
import { TurnlineError } from '../../src/contract/errors.ts'
import { type AppEnv, type RouteContext, validBody } from '../http/app-context.ts'
import { parseQuery, rejectQuery } from '../http/request-input.ts'
import { schemaResolver } from './schema-resolver.ts'

/**
 * The request half of a route declaration. Each middleware validates one part of the request
 * with a zod schema from src/contract — through the project's own parsing, so every rejection
 * is a TurnlineError mapped to HTTP in functions/http/http-errors.ts — and carries the same
 * schema to the OpenAPI generator (hono-openapi reads it from the route), so the document is
 * derived from what the route really checks.
 */

type Shape = Record<string, z.ZodType>
type Out<S extends Shape> = { [K in keyof S]: z.output<S[K]> }
type Validated<T extends string, V> = MiddlewareHandler<
  AppEnv,
  string,
  { in: Record<T, unknown>; out: Record<T, V> }
>

/** Marks `middleware` for the generator as the validator of `target` with `schema`. */
function documented<M extends MiddlewareHandler<AppEnv>>(
  middleware: M,
  target: 'param' | 'query' | 'header',
  schema: z.ZodType,
): M {
  return Object.assign(middleware, {
    [uniqueSymbol]: { target, ...schemaResolver(schema, 'input') },
  })
}

/** One value by its own schema; the first issue is the message, `field` names the value. */
function parseOne<S extends z.ZodType>(schema: S, value: unknown, field: string): z.output<S> {
  const result = schema.safeParse(value)
  if (result.success) return result.data
  const message = result.error.issues[0]?.message ?? 'is not valid'
  throw new TurnlineError('invalid_input', message, { details: { field } })
}

/** Path parameters, checked in the order of `object`'s fields (errors name `path.<name>`). */
export function pathParams<S extends Shape>(object: z.ZodObject<S>): Validated<'param', Out<S>> {
  const middleware: Validated<'param', Out<S>> = async (c, next) => {
    const values: Record<string, unknown> = {}
    for (const [name, schema] of Object.entries(object.shape)) {
      values[name] = parseOne(schema, c.req.param(name), `path.${name}`)
    }
    c.req.addValidatedData('param', values)
    await next()
  }
  return documented(middleware, 'param', object)
}

/** The query string by `schema` (unknown and repeated parameters are errors). */
export function queryParams<S extends z.ZodType>(schema: S): Validated<'query', z.output<S>> {
  const middleware: Validated<'query', z.output<S>> = async (c, next) => {
    c.req.addValidatedData('query', parseQuery(schema, c.req.url) as Record<string, unknown>)
    await next()
  }
  return documented(middleware, 'query', schema)
}

/** For routes that take no query parameters: any parameter is an unknown field. */
export const noQuery: MiddlewareHandler<AppEnv> = async (c, next) => {
  rejectQuery(c.req.url)
  await next()
}

/**
 * Request headers by the fields of `object` (named as sent, e.g. `Idempotency-Key`; errors name
 * `header.<lowercase name>`). With `when`, they are checked only on requests it accepts (a header
 * that only means something in one mode), and absent otherwise.
 */
export function headerParams<S extends Shape>(
  object: z.ZodObject<S>,
  when?: (c: Context<AppEnv>) => boolean,
): Validated<'header', Partial<Out<S>>> {
  const middleware: Validated<'header', Partial<Out<S>>> = async (c, next) => {
    const values: Record<string, unknown> = {}
    if (when === undefined || when(c)) {
      for (const [name, schema] of Object.entries(object.shape)) {
        const value = parseOne(schema, c.req.header(name), `header.${name.toLowerCase()}`)
        if (value !== undefined) values[name] = value
      }
    }
    c.req.addValidatedData('header', values)
    await next()
  }
  return documented(middleware, 'header', object)
}

/**
 * Documents request headers that another check reads (a signature over the whole request):
 * nothing is validated here.
 */
export function documentedHeaders(object: z.ZodObject): MiddlewareHandler<AppEnv> {
  const middleware: MiddlewareHandler<AppEnv> = async (_c, next) => {
    await next()
  }
  return documented(middleware, 'header', object)
}

export interface BodyDocs {
  /** Whether the body may be left out (then it counts as `{}`). */
  required: boolean
  examples: Record<string, { summary: string; value: unknown }>
  description?: string
}

/**
 * The JSON body by `schema`, read within the body limits (functions/http/read-body.ts); an empty
 * body counts as `{}`. Documented as the operation's request body with its examples.
 */
export function jsonBody<S extends z.ZodType>(
  ctx: RouteContext,
  schema: S,
  docs: BodyDocs,
): Validated<'json', z.output<S>> {
  const middleware: Validated<'json', z.output<S>> = async (c, next) => {
    c.req.addValidatedData('json', (await validBody(c, ctx, schema)) as Record<string, unknown>)
    await next()
  }
  return Object.assign(middleware, {
    [uniqueSymbol]: { spec: { requestBody: bodySpec(schema, docs) } },
  })
}

/**
 * The documentation of a body a route validates itself (one of several schemas chosen by a path
 * parameter, or a signed body checked byte for byte): `schema` is what it accepts.
 */
export function documentedBody(schema: z.ZodType, docs: BodyDocs): MiddlewareHandler<AppEnv> {
  const middleware: MiddlewareHandler<AppEnv> = async (_c, next) => {
    await next()
  }
  return Object.assign(middleware, {
    [uniqueSymbol]: { spec: { requestBody: bodySpec(schema, docs) } },
  })
}

function bodySpec(schema: z.ZodType, docs: BodyDocs) {
  return {
    required: docs.required,
    ...(docs.description ? { description: docs.description } : {}),
    content: {
      'application/json': {
        schema: schemaResolver(schema, 'input'),
        examples: docs.examples,
      },
    },
  }
}
