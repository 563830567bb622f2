import * as z from 'zod'
import { ERROR_CODES } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'

/** The error answers of the HTTP API (notes: `response-fields.ts`). */

export const ErrorBodySchema = lazySchema(() =>
  z
    .object({
      error: z
        .object({
          code: z.enum(ERROR_CODES).describe('Stable machine-readable error code.'),
          message: z.string().describe('What went wrong, naming the offending field or value.'),
          details: z
            .record(z.string(), z.unknown())
            .optional()
            .describe(
              'Structured details: `field` or `issues` for invalid input, limits, reasons.',
            ),
        })
        .describe('The error.'),
    })
    .meta({
      id: 'Error',
      description: 'Every error answer: `{"error":{"code","message","details?"}}`.',
    }),
)

/** The error answers of `/v1/responses`: the Open Responses envelope (docs/http-api.md). */
export const OpenResponsesErrorBodySchema = lazySchema(() =>
  z
    .object({
      error: z
        .object({
          type: z
            .enum([
              'invalid_request',
              'not_found',
              'too_many_requests',
              'model_error',
              'server_error',
            ])
            .describe("The specification's error category."),
          code: z.enum(ERROR_CODES).describe("Turnline's machine-readable error code."),
          param: z
            .string()
            .describe('The offending request field (`input[1].role`); `""` when none is.'),
          message: z.string().describe('What went wrong, naming the offending field or value.'),
          details: z
            .record(z.string(), z.unknown())
            .optional()
            .describe('Structured details, as in the error of the other routes.'),
        })
        .describe('The error.'),
    })
    .meta({
      id: 'OpenResponsesError',
      description:
        'Every error answer of `/v1/responses`: `{"error":{"type","code","param","message"}}`.',
    }),
)
