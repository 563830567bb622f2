import OpenAI from 'openai'
import { describe, expect, it } from 'vitest'
import { gate } from '../support/gate.ts'
import { usedResponsesApp, WEATHER_TOOL } from '../support/responses-app.ts'

/**
 * What a request's `input` carries besides its last user messages, with the `openai` client
 * (default configuration) over real HTTP: an Idempotency-Key sent again with another earlier
 * conversation (other messages, another function output) is 422, never the first answer; a
 * `previous_response_id` naming a response that has not ended is 409, never a continuation of a
 * transcript without that response's input and answer; a keyed retry of a continuation whose
 * previous response was deleted since answers the same response; the text of a trailing user
 * message's `output_text` part reaches the model; a part the transcript has no room for (an
 * image in a function output or an assistant message, a user's refusal) is 400 naming it; an
 * input carries at most 500 images and files.
 */
const app = usedResponsesApp('responses-retry-chain-key-0123456789', 'tenant-rc')

type Json = Record<string, unknown>
type Input = OpenAI.Responses.ResponseInput
let n = 0
const keyed = () => ({ headers: { 'Idempotency-Key': `retry-chain-${Date.now()}-${n++}` } })
/** The messages of the model request the mock received last. */
const seen = () => (app.engine.mock.requests.at(-1)?.body.messages ?? []) as Json[]

const TOOLS = [{ ...WEATHER_TOOL, strict: false }] as OpenAI.Responses.FunctionTool[]
/** A call of get_weather for Paris and its output, after the question. */
const loop = (output: OpenAI.Responses.ResponseInputItem.FunctionCallOutput['output']): Input => [
  { role: 'user', content: 'Weather in Paris?' },
  {
    type: 'function_call',
    call_id: 'call_p1',
    name: 'get_weather',
    arguments: '{"location":"Paris"}',
  },
  { type: 'function_call_output', call_id: 'call_p1', output },
]

describe('an Idempotency-Key and the conversation of the input', () => {
  it('the same conversation again is the same response, the model asked once', async () => {
    const key = keyed()
    app.engine.mock.enqueue({ text: 'Sunny, says the tool.' })
    const first = await app.client.responses.create({ input: loop('sunny'), tools: TOOLS }, key)
    const again = await app.client.responses.create({ input: loop('sunny'), tools: TOOLS }, key)
    expect(again.id).toBe(first.id)
    expect(again.output_text).toBe('Sunny, says the tool.')
    expect(app.engine.mock.requests).toHaveLength(1)
  })

  it.each<[string, Input, Input]>([
    [
      'other earlier messages before the same question',
      [{ role: 'user', content: 'And now?' }],
      [
        { role: 'user', content: 'I live in Oslo.' },
        { role: 'assistant', content: 'Noted.' },
        { role: 'user', content: 'And now?' },
      ],
    ],
    ['another function output', loop('sunny'), loop('rain all day')],
  ])('with %s is 422 idempotency_key_reused, and runs nothing', async (_what, first, other) => {
    const key = keyed()
    app.engine.mock.enqueue({ text: 'The first answer.' })
    await app.client.responses.create({ input: first, tools: TOOLS }, key)
    const reused = await app.client.responses
      .create({ input: other, tools: TOOLS }, key)
      .catch((error: unknown) => error)
    expect(reused).toBeInstanceOf(OpenAI.UnprocessableEntityError)
    expect(reused).toMatchObject({
      code: 'idempotency_key_reused',
      param: 'header.idempotency-key',
    })
    expect(app.engine.mock.requests).toHaveLength(1)
  })
})

describe('previous_response_id of a response that has not ended', () => {
  it('is 409 while it runs; once it has completed, the continuation reads its whole conversation', async () => {
    const held = gate()
    app.engine.mock.enqueue({ text: 'Paris is the capital.', hold: held.promise })
    const first = await app.client.responses.create({
      input: 'The capital of France?',
      stream: true,
    })
    const events: { type: string; response?: { id: string } }[] = []
    const reading = (async () => {
      for await (const event of first) events.push(event)
    })()
    await expect.poll(() => app.engine.mock.requests.length).toBe(1)
    await expect.poll(() => events.length).toBeGreaterThan(0)
    const id = events[0]?.response?.id as string

    const early = await app.client.responses
      .create({ input: 'And of Italy?', previous_response_id: id })
      .catch((error: unknown) => error)
    expect(early).toBeInstanceOf(OpenAI.ConflictError)
    expect(early).toMatchObject({ code: 'conflict', param: 'previous_response_id' })
    expect(String((early as Error).message)).toContain(id)
    expect(app.engine.mock.requests).toHaveLength(1)

    held.open()
    await reading
    expect(events.at(-1)?.type).toBe('response.completed')
    app.engine.mock.enqueue({ text: 'Rome.' })
    const next = await app.client.responses.create({
      input: 'And of Italy?',
      previous_response_id: id,
    })
    expect(next.output_text).toBe('Rome.')
    expect(seen().map((m) => [m.role, m.content])).toEqual([
      ['user', 'The capital of France?'],
      ['assistant', 'Paris is the capital.'],
      ['user', 'And of Italy?'],
    ])
  })
})

describe('a keyed retry of a continuation', () => {
  it('whose previous response was deleted since is still the same response, run once', async () => {
    app.engine.mock.enqueue({ text: 'Paris.' })
    const previous = await app.client.responses.create({ input: 'The capital of France?' })
    const key = keyed()
    app.engine.mock.enqueue({ text: 'Rome.' })
    const body = { input: 'And of Italy?', previous_response_id: previous.id }
    const first = await app.client.responses.create(body, key)
    await app.client.responses.delete(previous.id)

    const again = await app.client.responses.create(body, key)
    expect(again).toMatchObject({ id: first.id, output_text: 'Rome.' })
    expect(app.engine.mock.requests).toHaveLength(2)
    // Another input under the key is still refused; without the key the previous one is gone.
    const other = await app.client.responses
      .create({ ...body, input: 'And of Spain?' }, key)
      .catch((error: unknown) => error)
    expect(other).toMatchObject({ status: 422, code: 'idempotency_key_reused' })
    const unkeyed = await app.client.responses.create(body).catch((error: unknown) => error)
    expect(unkeyed).toBeInstanceOf(OpenAI.NotFoundError)
  })
})

describe('the parts of a message', () => {
  it.each<[string, Json, string]>([
    [
      "an assistant's image",
      {
        role: 'assistant',
        content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }],
      },
      'a assistant message holds output_text, refusal, input_text parts, not input_image',
    ],
    [
      "a user's refusal",
      { role: 'user', content: [{ type: 'refusal', refusal: 'No.' }] },
      'a user message holds input_text, input_image, input_file, output_text parts, not refusal',
    ],
  ])('%s is refused with 400 naming the part, never dropped', async (_what, message, why) => {
    const refused = await app.client.responses
      .create({
        input: [
          { type: 'message', ...message },
          { role: 'user', content: 'Go on.' },
        ] as unknown as Input,
      })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect(refused).toMatchObject({ code: 'invalid_input', param: 'input[0].content[0]' })
    expect(String((refused as Error).message)).toContain(why)
    expect(app.engine.mock.requests).toHaveLength(0)
  })

  it("a trailing user message's output_text part is read as text, as in an earlier one", async () => {
    app.engine.mock.enqueue({ text: 'Both read.' })
    await app.client.responses.create({
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'First part.' },
            { type: 'output_text', text: 'Second part.' },
          ],
        } as unknown as OpenAI.Responses.ResponseInputItem,
      ],
    })
    expect(seen().at(-1)).toMatchObject({ role: 'user', content: 'First part.\n\nSecond part.' })
  })
})

describe('an image in a function output', () => {
  const IMAGE = 'https://example.com/chart.png'

  it('is refused with 400 naming the part, never dropped on the way to the model', async () => {
    const refused = await app.client.responses
      .create({
        tools: TOOLS,
        input: loop([
          { type: 'input_text', text: 'Here is the chart.' },
          { type: 'input_image', image_url: IMAGE, detail: 'auto' },
        ]),
      })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect(refused).toMatchObject({ code: 'invalid_input', param: 'input[2].output[1]' })
    expect(app.engine.mock.requests).toHaveLength(0)
  })

  it('a user message after the outputs carries it to the model', async () => {
    app.engine.mock.enqueue({ text: 'A sunny chart.' })
    const response = await app.client.responses.create({
      tools: TOOLS,
      input: [
        ...loop('Here is the chart.'),
        { role: 'user', content: [{ type: 'input_image', image_url: IMAGE, detail: 'auto' }] },
      ],
    })
    expect(response.output_text).toBe('A sunny chart.')
    const messages = seen()
    expect(messages.at(-2)).toMatchObject({ role: 'tool', content: 'Here is the chart.' })
    expect(JSON.stringify(messages.at(-1))).toContain(IMAGE)
  })
})

describe('the images and files of an input', () => {
  /** `count` distinct one-pixel-sized `data:` images, 50 to a user message, an answer between. */
  const withImages = (count: number): Input => {
    const images = Array.from({ length: count }, (_, i) => ({
      type: 'input_image' as const,
      image_url: `data:image/png;base64,${Buffer.from(`image ${i}`).toString('base64')}`,
      detail: 'auto' as const,
    }))
    const input: Input = []
    for (let i = 0; i < count; i += 50) {
      input.push({ role: 'user', content: images.slice(i, i + 50) })
      input.push({ role: 'assistant', content: 'Seen.' })
    }
    input.push({ role: 'user', content: 'What did they show?' })
    return input
  }

  it('500 are taken; one more is 400 before anything is stored or run', async () => {
    app.engine.mock.enqueue({ text: 'Pixels.' })
    const taken = await app.client.responses.create({ input: withImages(500) })
    expect(taken.output_text).toBe('Pixels.')
    const refused = await app.client.responses
      .create({ input: withImages(501) })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect(refused).toMatchObject({ code: 'invalid_input', param: 'input' })
    expect(String((refused as Error).message)).toContain('at most 500 input_image and input_file')
    expect(app.engine.mock.requests).toHaveLength(1)
  })
})
