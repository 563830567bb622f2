import { existsSync } from 'node:fs'
import { type Browser, chromium } from 'playwright-core'

/**
 * The system Chromium (Debian package `chromium`, installed by infra/local/ensure-packages.sh
 * for `npm test` and by .ci/run), driven by playwright-core. No browser is downloaded; a machine
 * without one fails the tests that need it, loudly.
 */
export function chromiumPath(): string {
  const candidates = [
    process.env.TURNLINE_TEST_CHROMIUM,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
  ].filter((path): path is string => Boolean(path))
  const found = candidates.find((path) => existsSync(path))
  if (!found) {
    throw new Error(
      `no Chromium at ${candidates.join(', ')}: install the Debian package ` +
        '(bash infra/local/ensure-packages.sh chromium fonts-dejavu-core, as root) or set ' +
        'TURNLINE_TEST_CHROMIUM to a Chromium binary',
    )
  }
  return found
}

/**
 * Headless Chromium; as root it needs --no-sandbox (the tests load only local pages). `args`
 * adds switches (e.g. `--host-resolver-rules` to serve a page under another site's name).
 */
export function launchChromium(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', ...args],
  })
}
