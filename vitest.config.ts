import { createRequire } from 'node:module'
import path from 'node:path'
import { defineConfig } from 'vitest/config'

const require = createRequire(import.meta.url)

/**
 * The AWS SDK's ESM build of @aws-sdk/xml-builder parses XML with DOMParser, which workerd lacks;
 * its CommonJS build does not. Harmless in node, required wherever the SDK runs in workerd.
 */
const xmlBuilderCjs = path.join(
  path.dirname(require.resolve('@aws-sdk/xml-builder/package.json')),
  'dist-cjs/index.js',
)

/** One vitest project per test tier; `npm test` runs them all against real local services. */
function tier(name: string, timeoutMs: number) {
  return {
    extends: true as const,
    test: {
      name,
      include: [`test/${name}/**/*.test.ts`],
      environment: 'node' as const,
      testTimeout: timeoutMs,
      hookTimeout: timeoutMs,
    },
  }
}

export default defineConfig({
  resolve: {
    alias: [{ find: /^@aws-sdk\/xml-builder$/, replacement: xmlBuilderCjs }],
  },
  test: {
    // The AWS SDK's documented switch for its "will require node >=22" notice: the suite runs
    // on Node 20 as well as 22 on purpose, and one warning per worker buries real output.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // After each test: every open mock OpenAI server answered exactly its script.
    setupFiles: ['test/support/vitest-setup.ts'],
    projects: [
      tier('unit', 10_000),
      tier('contract', 30_000),
      tier('integration', 60_000),
      tier('runtime', 60_000),
    ],
  },
})
