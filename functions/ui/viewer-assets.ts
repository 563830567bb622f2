import { VIEWER_SCRIPT_ACTIONS } from './viewer-script-actions.ts'
import { VIEWER_SCRIPT_APP } from './viewer-script-app.ts'
import { VIEWER_SCRIPT_CORE } from './viewer-script-core.ts'
import { VIEWER_SCRIPT_ITEMS } from './viewer-script-items.ts'
import { VIEWER_SCRIPT_SHARED } from './viewer-script-shared.ts'
import { VIEWER_SCRIPT_TIMELINE } from './viewer-script-timeline.ts'

/**
 * `GET /ui/viewer.js`: the viewer's parts in dependency order (the shared SSE decoder and
 * backoff first), in one strict-mode function scope
 * (nothing leaks into the page's globals). Served from this origin only, under a CSP that allows
 * no inline script.
 */
export const VIEWER_JS = `(() => {
'use strict'
${VIEWER_SCRIPT_SHARED}
${VIEWER_SCRIPT_CORE}
${VIEWER_SCRIPT_ITEMS}
${VIEWER_SCRIPT_TIMELINE}
${VIEWER_SCRIPT_ACTIONS}
${VIEWER_SCRIPT_APP}
})()
`

export { VIEWER_CSS } from './viewer-style.ts'
