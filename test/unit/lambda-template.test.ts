import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseApiKeys } from '../../functions/http/auth.ts'

/**
 * The SAM template's `ApiKeys` parameter: the function URL is public (AuthType NONE), so the
 * stack refuses an empty or malformed TURNLINE_API_KEYS before anything is deployed. Its pattern
 * must accept what the server accepts and refuse what would leave it without keys.
 */
const template = readFileSync(
  new URL('../../infra/deploy/lambda/template.yaml', import.meta.url),
  'utf8',
)

function apiKeysParameter(): { minLength: number; pattern: RegExp } {
  const block = /\n {2}ApiKeys:\n((?: {4}.*\n| *#.*\n)+)/.exec(template)?.[1] ?? ''
  const minLength = /\n? {4}MinLength: (\d+)/.exec(block)?.[1]
  // A YAML double-quoted scalar: its escapes (here only \\) read as JSON's.
  const pattern = /\n? {4}AllowedPattern: ("(?:[^"\\]|\\.)*")/.exec(block)?.[1]
  if (minLength === undefined || pattern === undefined) {
    throw new Error(`ApiKeys has no MinLength or AllowedPattern:\n${block}`)
  }
  return { minLength: Number(minLength), pattern: new RegExp(JSON.parse(pattern) as string) }
}

describe('infra/deploy/lambda/template.yaml', () => {
  it('ApiKeys is required and shaped like TURNLINE_API_KEYS', () => {
    const { minLength, pattern } = apiKeysParameter()
    const accepted = (value: string) => value.length >= minLength && pattern.test(value)
    const valid = [
      'abcdefghijklmnop=acme',
      'key-0123456789abcdef=acme,key-fedcba9876543210=beta.2',
      // base64 padding in the key: the tenant follows the last '='
      'c2VjcmV0LWtleS0wMTIzNA==acme_prod',
      `sha256:${'ab'.repeat(32)}=acme`,
    ]
    for (const value of valid) {
      expect({ value, accepted: accepted(value) }).toEqual({ value, accepted: true })
      expect(parseApiKeys(value)).toEqual(expect.arrayContaining([expect.anything()]))
    }
    const invalid = [
      '',
      ' ',
      'short=acme',
      'abcdefghijklmnop=',
      'abcdefghijklmnop',
      'abcdefghijklmnop=acme,',
      'abcdefghij klmnop=acme',
      'abcdefghijklmnop=-acme',
      'abcdefghijklmnop=acme, key-0123456789abcdef=beta',
    ]
    for (const value of invalid) {
      expect({ value, accepted: accepted(value) }).toEqual({ value, accepted: false })
    }
  })
})

/** A top-level resource's block of the template (up to the next resource). */
function resource(name: string): string {
  const block = new RegExp(`\\n {2}${name}:\\n((?: {4}.*\\n| *#.*\\n|\\n)+)`).exec(template)?.[1]
  if (block === undefined) throw new Error(`no resource ${name} in the template`)
  return block
}

describe('infra/deploy/lambda/template.yaml: background work', () => {
  it('names only handlers the Lambda entry exports', () => {
    const source = (file: string) =>
      readFileSync(new URL(`../../functions/entries/${file}`, import.meta.url), 'utf8')
    // The entry re-exports the handlers of lambda-handlers.ts once it has set V8's flags.
    const reexported = /export const \{([^}]*)\} = await import\('\.\/lambda-handlers\.ts'\)/
      .exec(source('lambda.ts'))?.[1]
      ?.split(',')
      .map((name) => name.trim())
    const handlers = [...template.matchAll(/Handler: index\.(\w+)/g)].map((m) => m[1])
    expect(handlers).toEqual(
      expect.arrayContaining(['handler', 'work', 'sweep', 'callbacks', 'retention']),
    )
    for (const name of handlers) {
      expect(reexported).toContain(name)
      expect(source('lambda-handlers.ts')).toMatch(new RegExp(`export const ${name}\\b`))
    }
  })

  it('consumes the work queue with partial batch responses and hides a message while it runs', () => {
    const work = resource('WorkFunction')
    expect(work).toMatch(/Handler: index\.work\n/)
    expect(work).toMatch(/Type: SQS\n\s+Properties:\n\s+Queue: !GetAtt WorkQueue\.Arn/)
    expect(work).toMatch(/FunctionResponseTypes: \[ReportBatchItemFailures\]/)
    // A message to deliver later is hidden until then (ChangeMessageVisibility).
    expect(work).toMatch(/SQSPollerPolicy: \{ QueueName: !GetAtt WorkQueue\.QueueName \}/)
    const timeout = Number(/Timeout: (\d+)/.exec(work)?.[1])
    const visibility = Number(/VisibilityTimeout: (\d+)/.exec(resource('WorkQueue'))?.[1])
    expect(visibility).toBeGreaterThanOrEqual(6 * timeout)
    expect(resource('WorkQueue')).toMatch(/deadLetterTargetArn: !GetAtt WorkDeadLetterQueue\.Arn/)
    // Every function that rings a bell may send to the queue, and every one knows its URL.
    for (const name of ['ApiFunction', 'WorkFunction', 'SweepFunction']) {
      expect(resource(name)).toMatch(
        /SQSSendMessagePolicy: \{ QueueName: !GetAtt WorkQueue\.QueueName \}/,
      )
    }
    expect(template).toMatch(/\n {8}TURNLINE_WORK_QUEUE_URL: !Ref WorkQueue\n/)
    expect(resource('SweepFunction')).toMatch(
      /Handler: index\.sweep\n[\s\S]*ScheduleExpression: rate\(1 minute\)/,
    )
  })
})

describe('infra/deploy/lambda/template.yaml: the bucket', () => {
  it("gives the functions the bucket's region, which the S3 client signs for", () => {
    // The store signs for S3_REGION, us-east-1 when unset (functions/store-choice.ts); the
    // stack makes the bucket in its own region.
    const globals = /\nGlobals:\n((?: {2,}.*\n| *#.*\n)+)/.exec(template)?.[1] ?? ''
    expect(globals).toMatch(/\n {8}S3_BUCKET: !Ref SessionsBucket\n/)
    expect(globals).toMatch(/\n {8}S3_REGION: !Ref AWS::Region\n/)
  })
})
