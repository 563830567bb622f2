import * as z from 'zod'
import { TurnlineError } from './errors.ts'
import { lazySchema } from './lazy-schema.ts'

/**
 * `GET /v1/responses/{id}/input_items`: the items a response was given as input, one page of
 * them (the Open Responses `ListResponseinputitems` operation). Item ids are the list's own
 * (`msg_<n>_<session id>`, `fc_…`, `fco_…`, `cmp_…`; `n` its place in the input), so `after`
 * and `before` name an item of this same list.
 */
const ItemIdSchema = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[a-z]+_[0-9]+_[A-Za-z0-9._-]+$/, 'not an item id of this list'),
)

export const InputItemsQuerySchema = lazySchema(() =>
  z.strictObject({
    limit: z.coerce
      .number()
      .int()
      .min(0)
      .max(100)
      .default(20)
      .describe('Items per page, 0 to 100 (default 20).'),
    order: z
      .enum(['asc', 'desc'])
      .default('desc')
      .describe('`desc` (default): the last input item first; `asc`: in input order.'),
    after: ItemIdSchema.optional().describe(
      'The `last_id` of the previous page: the items after it in `order`.',
    ),
    before: ItemIdSchema.optional().describe('The items before this one in `order`.'),
    include: z
      .string()
      .max(100)
      .optional()
      .describe('Accepted and ignored: images are always listed with their `image_url`.'),
    'include[]': z.string().max(100).optional().describe('As `include`.'),
  }),
)
export type InputItemsQuery = z.infer<typeof InputItemsQuerySchema>

/** An input item as listed: an Open Responses item with its list id and status `completed`. */
export type ListedInputItem =
  | {
      type: 'message'
      id: string
      status: 'completed'
      role: 'user' | 'assistant' | 'system'
      content: ListedContent[]
    }
  | {
      type: 'function_call'
      id: string
      status: 'completed'
      call_id: string
      name: string
      arguments: string
    }
  | {
      type: 'function_call_output'
      id: string
      status: 'completed'
      call_id: string
      output: string
    }
  | { type: 'compaction'; id: string; encrypted_content: string }

export type ListedContent =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; image_url: string; detail: 'auto' | 'low' | 'high' }
  | { type: 'input_file'; filename: string; file_data: string }
  | { type: 'output_text'; text: string; annotations: []; logprobs: [] }

export interface InputItemList {
  object: 'list'
  data: ListedInputItem[]
  first_id: string | null
  last_id: string | null
  has_more: boolean
}

export const InputItemListSchema = lazySchema(() =>
  z
    .object({
      object: z.literal('list').describe('Always `list`.'),
      data: z
        .array(
          z.looseObject({
            type: z.string().describe('The item type.'),
            id: z.string().describe('The item id in this list.'),
          }),
        )
        .describe(
          'Open Responses items: `message` (user `input_text`/`input_image`/`input_file` parts, assistant `output_text`), `function_call`, `function_call_output`.',
        ),
      first_id: z.string().nullable().describe('The id of the first item of the page.'),
      last_id: z.string().nullable().describe('The id of the last item: pass it as `after`.'),
      has_more: z.boolean().describe('Whether items follow this page in `order`.'),
    })
    .meta({ id: 'InputItemList', description: "One page of a response's input items." }),
)

/** The page of `items` (in input order) that the query asks for. */
export function pageOfItems(
  items: readonly ListedInputItem[],
  query: InputItemsQuery,
): InputItemList {
  const ordered = query.order === 'asc' ? [...items] : [...items].reverse()
  const place = (id: string | undefined, field: 'after' | 'before') => {
    if (id === undefined) return undefined
    const index = ordered.findIndex((item) => item.id === id)
    if (index === -1) {
      throw new TurnlineError('invalid_input', `${field}: no input item ${id} in this list`, {
        details: { field: `query.${field}` },
      })
    }
    return index
  }
  const after = place(query.after, 'after')
  const before = place(query.before, 'before')
  const from = after === undefined ? 0 : after + 1
  const to = before === undefined ? ordered.length : before
  const window = ordered.slice(from, Math.max(from, to))
  const data = window.slice(0, query.limit)
  return {
    object: 'list',
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: window.length > data.length,
  }
}
