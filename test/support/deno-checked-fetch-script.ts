import { checkedFetch } from '../../adapters/egress/checked-fetch.ts'
import { denoEgressPolicy } from '../../adapters/egress/deno-egress-host.ts'
import { EgressEnvSchema, egressRulesFrom } from '../../src/contract/egress-rules.ts'

/**
 * Run by `deno run` (test/runtime/deno-egress-fetch.test.ts): the checked fetch of the Deno
 * entry, on the egress variables of the first argument (JSON), fetching each URL of the rest
 * (`manual:` before one: without following redirects). Prints one JSON line: per URL, the
 * status and body, or the error's name and message.
 */
const { args } = (globalThis as unknown as { Deno: { args: string[] } }).Deno
const [variables = '{}', ...urls] = args
const fetchChecked = checkedFetch(
  denoEgressPolicy(egressRulesFrom(EgressEnvSchema.parse(JSON.parse(variables)))),
)
const results: Record<string, unknown>[] = []
for (const target of urls) {
  const manual = target.startsWith('manual:')
  const url = manual ? target.slice('manual:'.length) : target
  try {
    const response = await fetchChecked(url, manual ? { redirect: 'manual' } : {})
    results.push({ status: response.status, body: await response.text() })
  } catch (error) {
    const { name, message, cause } = error as Error
    results.push({ error: name, message, ...(cause ? { cause: String(cause) } : {}) })
  }
}
console.log(JSON.stringify(results))
