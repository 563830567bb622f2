/**
 * `GET /ui`: the timeline viewer's page. A static shell: the script (`/ui/viewer.js`) renders
 * the session list and one session's timeline from the v1 API, so the page itself holds no
 * data and needs no authentication; the API calls carry the key the user enters.
 */

export const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

/** The head every page of this server starts with: UTF-8, phone viewport, no referrer, no icon. */
export const PAGE_HEAD = `<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<link rel="icon" href="data:,">`

export function viewerPage(version: string): string {
  return `<!doctype html>
<html lang="en">
<head>
${PAGE_HEAD}
<title>Turnline sessions</title>
<link rel="stylesheet" href="/ui/viewer.css">
<script src="/ui/viewer.js" defer></script>
</head>
<body>
<header class="top">
<a class="brand" href="#/">Turnline</a><span class="ver">${escapeHtml(version)}</span>
<nav><a href="#/">Sessions</a><a href="/docs">API</a><button type="button" id="forget-key" hidden>Forget key</button></nav>
</header>
<main id="main" data-view="loading"><noscript>The session viewer needs JavaScript.</noscript></main>
</body>
</html>
`
}
