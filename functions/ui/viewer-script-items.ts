/**
 * The viewer script, part 2: one renderer per VT Code item type (agent message, reasoning,
 * plan, command execution, tool invocation and output, file change, MCP call, web search,
 * harness, error). Each returns the item's head and body as DOM nodes built from text.
 */
export const VIEWER_SCRIPT_ITEMS = String.raw`
function jsonText(value) {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value, null, 2)
  } catch (error) {
    return String(value)
  }
}

/** The argument worth showing first: the command of a shell tool, the path of a file tool. */
function headlineOf(args) {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return undefined
  for (const name of ['cmd', 'command', 'path', 'file_path', 'query', 'url']) {
    const value = args[name]
    if (typeof value === 'string') return value
    if (Array.isArray(value) && value.every((part) => typeof part === 'string')) return value.join(' ')
  }
  return undefined
}

function statusBadge(status) {
  return status ? badge(String(status).replace(/_/g, ' '), String(status)) : null
}

function exitMeta(code) {
  return typeof code === 'number' ? el('span', { class: 'meta', text: 'exit ' + code }) : null
}

/** A link that opens an artifact of the session whole (its text, in a new tab). */
function artifactLink(artifactId, label, onOpen) {
  const open = (event) => {
    event.preventDefault()
    if (onOpen) onOpen(artifactId)
  }
  return el('a', { href: '#', class: 'artifact-link', 'data-artifact': artifactId, text: label, onclick: open })
}

/** How a kept answer's preview (or a hook's note in a deny reason) names its artifact. */
const KEPT_NOTICE = /\bkept (?:whole )?as artifact (out_[0-9a-f]{32})\b/

/**
 * The link to an output kept whole: as the session's listing names it (GET …/artifacts, with
 * its sizes; the only place a command's is named), else as its preview's notice does.
 */
function keptOutputLink(item, kept, onOpen) {
  const named = KEPT_NOTICE.exec(String(item.output || ''))
  const artifactId = kept ? kept.artifact_id : named && named[1]
  if (!artifactId) return null
  const label = kept ? artifactId + ' (' + fmtInt(kept.size) + ' bytes, ' + fmtInt(kept.lines) + ' lines)' : artifactId
  return el('div', { class: 'meta output-artifact' }, ['whole output: ', artifactLink(artifactId, label, onOpen)])
}

/** The kept hook answers of the listing (GET …/artifacts), each linked once in its turn. */
class HookAnswerLinks {
  constructor(root) {
    /** The timeline, whose thread-started marker holds the links kept before any turn. */
    this.root = root
    this.start = undefined
    /** Not shown yet: each waits for its turn to be on the page. */
    this.waiting = []
    this.shown = new Set()
  }

  /** The thread-started marker as a place for links, once it is on the page. */
  threadStart() {
    const node = this.start ? undefined : this.root && this.root.querySelector(':scope > li.marker.start')
    if (node) this.start = { seq: Number(node.getAttribute('data-seq')), node: node, list: node.lastChild }
    return this.start
  }

  add(kept) {
    for (const [key, output] of kept) {
      if (output.kind !== 'hook_answer' || this.shown.has(key)) continue
      this.shown.add(key)
      this.waiting.push(output)
    }
    return this
  }

  show(turns, lastSeq, onOpen) {
    const start = this.threadStart()
    this.waiting = this.waiting.filter((output) => !showHookAnswer(turns, lastSeq, output, onOpen, start))
  }
}

/**
 * A kept hook answer's link, in its turn — the last one started at or before the batch that
 * kept it (its seq) — below the turn's items; one kept as the session was created (batch 0,
 * before any turn: a session_start hook's) below the thread's start. False while that place is
 * not on the page.
 */
function showHookAnswer(turns, lastSeq, kept, onOpen, start) {
  const turn = turns.filter((t) => t.seq <= kept.seq).pop() || (start && start.seq <= kept.seq ? start : undefined)
  if (!turn || lastSeq < kept.seq) return false
  if (!turn.hookAnswers) {
    turn.hookAnswers = el('div', { class: 'hook-answers' })
    turn.node.insertBefore(turn.hookAnswers, turn.list.nextSibling)
  }
  const label = kept.artifact_id + ' (' + fmtInt(kept.size) + ' bytes, ' + fmtInt(kept.lines) + ' lines)'
  const who = kept.event + ' hook ' + kept.hook + (kept.tool_call_id ? ' (call ' + kept.tool_call_id + ')' : '')
  const line = el('div', { class: 'meta hook-answer', 'data-hook-event': kept.event }, [who + ', whole answer: ', artifactLink(kept.artifact_id, label, onOpen)])
  turn.hookAnswers.appendChild(line)
  return true
}

function outputBlock(text, meta, kept) {
  const lines = text ? text.split('\n').length : 0
  return el('div', { class: 'output' }, [
    text ? el('pre', { class: 'tool-output', text: text }) : el('div', { class: 'empty', text: 'no output' }),
    meta || lines > 20 ? el('div', { class: 'meta' }, [meta || null, lines > 20 ? ' ' + fmtInt(lines) + ' lines' : null]) : null,
    kept || null,
  ])
}

const ITEM_RENDERERS = {
  agent_message: (item) => ({
    kind: 'assistant',
    body: [el('div', { class: 'text', text: item.text })],
  }),
  reasoning: (item) => ({
    kind: 'reasoning',
    head: item.stage ? [el('span', { class: 'meta', text: item.stage })] : [],
    body: [el('div', { class: 'text', text: item.text })],
  }),
  plan: (item) => ({ kind: 'plan', body: [el('pre', { text: item.text })] }),
  command_execution: (item) => ({
    kind: 'command',
    head: [el('code', { class: 'name', text: item.command }), statusBadge(item.status), exitMeta(item.exit_code)],
    body: [outputBlock(item.aggregated_output || '')],
  }),
  tool_invocation: (item) => {
    const headline = headlineOf(item.arguments)
    const args = item.arguments === undefined ? null : jsonText(item.arguments)
    return {
      kind: 'tool call',
      head: [
        el('span', { class: 'name', text: item.tool_name }),
        headline ? el('code', { class: 'headline', text: headline }) : null,
        statusBadge(item.outcome || item.status),
      ],
      body: [
        args && args !== headline && args.length > 0
          ? el('details', { class: 'args' }, [el('summary', { text: 'arguments' }), el('pre', { text: args })])
          : null,
      ],
    }
  },
  // A command that outlived its yield has no exit code yet and names its session: it went on
  // running after this output (the model polls or waits for it), so it is not shown finished.
  tool_output: (item, context) => ({
    kind: 'output',
    head: [
      item.exit_code === undefined && /\bsession_id\b/.test(String(item.output || ''))
        ? badge('left running', 'running')
        : statusBadge(item.status),
      exitMeta(item.exit_code),
    ],
    body: [
      outputBlock(
        item.output || '',
        item.spool_path ? 'spooled in the workspace: ' + item.spool_path : null,
        keptOutputLink(item, context.kept, context.onOpenArtifact),
      ),
    ],
  }),
  file_change: (item) => ({
    kind: 'file change',
    head: [statusBadge(item.status)],
    body: [
      el(
        'ul',
        { class: 'changes' },
        (item.changes || []).map((change) => el('li', {}, [el('span', { class: 'meta', text: change.kind + ' ' }), el('code', { text: change.path })])),
      ),
    ],
  }),
  mcp_tool_call: (item) => ({
    kind: 'mcp call',
    head: [el('span', { class: 'name', text: item.tool_name }), statusBadge(item.status)],
    body: [
      item.arguments !== undefined
        ? el('details', { class: 'args' }, [el('summary', { text: 'arguments' }), el('pre', { text: jsonText(item.arguments) })])
        : null,
      item.result !== undefined ? outputBlock(item.result) : null,
    ],
  }),
  web_search: (item) => ({
    kind: 'web search',
    head: [el('span', { class: 'name', text: item.query }), item.provider ? el('span', { class: 'meta', text: item.provider }) : null],
    body: item.results ? [el('ul', { class: 'changes' }, item.results.map((r) => el('li', { text: r })))] : [],
  }),
  harness: (item) => {
    const facts = []
    if (item.command) facts.push('command: ' + item.command)
    if (item.path) facts.push('path: ' + item.path)
    if (typeof item.exit_code === 'number') facts.push('exit ' + item.exit_code)
    if (item.attempt) facts.push('attempt ' + item.attempt)
    if (item.error_category) facts.push(item.error_category)
    if (typeof item.duration_ms === 'number') facts.push(fmtInt(item.duration_ms) + ' ms')
    return {
      kind: 'harness',
      head: [el('span', { class: 'name', text: String(item.event).replace(/_/g, ' ') })],
      body: [
        item.message ? el('div', { class: 'text', text: item.message }) : null,
        facts.length ? el('div', { class: 'meta', text: facts.join(' · ') }) : null,
      ],
    }
  },
  error: (item) => ({ kind: 'error', body: [el('div', { class: 'text', text: item.message })] }),
}

/**
 * Fills an item's element (head and body) from its newest snapshot; context holds what the
 * timeline knows beside the events (kept: the item's kept output; onOpenArtifact).
 */
function renderItem(node, item, context) {
  const render = ITEM_RENDERERS[item.type]
  const view = render
    ? render(item, context || {})
    : { kind: String(item.type), body: [el('pre', { text: jsonText(item) })] }
  node.className = 'item item-' + String(item.type).replace(/[^a-z_]/g, '')
  const head = el('div', { class: 'item-head' }, [el('span', { class: 'kind', text: view.kind })].concat(view.head || []))
  const body = el('div', { class: 'item-body' }, view.body)
  const slot = node.querySelector(':scope > .item-outputs')
  clear(node)
  append(node, [head, body, slot || el('div', { class: 'item-outputs' })])
}
`
