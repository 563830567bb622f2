/**
 * The viewer script, part 4: the views and the hash router. `#/?workspace=w&status=s` lists a
 * workspace's sessions, `#/sessions/<id>` shows one session's timeline, followed live; a 401
 * from the API shows the key form (the key goes to sessionStorage, never into a URL).
 */
export const VIEWER_SCRIPT_APP = String.raw`
let currentView = null

function mainNode() {
  return document.getElementById('main')
}

function render(view, nodes) {
  const main = mainNode()
  main.setAttribute('data-view', view)
  clear(main)
  append(main, nodes)
}

function parseRoute() {
  const hash = location.hash.replace(/^#/, '')
  const at = hash.indexOf('?')
  const path = at < 0 ? hash : hash.slice(0, at)
  const params = new URLSearchParams(at < 0 ? '' : hash.slice(at + 1))
  const match = /^\/sessions\/([^/?#]+)$/.exec(path)
  if (match) return { view: 'session', id: decodeURIComponent(match[1]) }
  return { view: 'list', workspace: params.get('workspace') || 'default', status: params.get('status') || '' }
}

function listHash(workspace, status) {
  const params = new URLSearchParams()
  if (workspace && workspace !== 'default') params.set('workspace', workspace)
  if (status) params.set('status', status)
  const query = params.toString()
  return '#/' + (query ? '?' + query : '')
}

function route() {
  if (currentView) currentView.abort()
  currentView = new AbortController()
  const signal = currentView.signal
  const target = parseRoute()
  const shown = target.view === 'session' ? showSession(target.id, signal) : showList(target.workspace, target.status, signal)
  shown.catch((error) => {
    if (!signal.aborted) showError(error)
  })
}

function showError(error) {
  if (error instanceof ApiError && error.status === 401) return showKeyForm(error)
  const title = error instanceof ApiError ? error.status + ' ' + error.code : 'Error'
  const text = error instanceof ApiError && error.status === 404 ? error.message + ' (or it belongs to another tenant, or retention deleted it)' : error && error.message ? error.message : String(error)
  render('error', [
    el('section', { class: 'panel notice error', id: 'error-panel' }, [el('strong', { text: title }), el('div', { text: text })]),
    el('p', {}, [el('a', { href: '#/', text: '← all sessions' })]),
  ])
}

function showKeyForm(error) {
  const refused = Boolean(memoryKey)
  const input = el('input', { type: 'password', name: 'api-key', autocomplete: 'off', placeholder: 'API key', 'aria-label': 'API key', required: true })
  const submit = (event) => {
    event.preventDefault()
    const key = input.value.trim()
    if (!key) return
    storeKey(key)
    route()
  }
  const message = refused
    ? [el('strong', { text: 'The server refused this key: ' + error.status + ' ' + error.code }), el('div', { text: error.message })]
    : [
        el('strong', { text: 'This server needs an API key.' }),
        el('div', { text: 'It is kept in this tab only (sessionStorage) and sent as an Authorization header, never in a URL.' }),
      ]
  render('key', el('section', { class: 'panel notice' + (refused ? ' error' : ''), id: 'key-panel' }, message.concat([
    el('form', { class: 'key', onsubmit: submit }, [input, el('button', { class: 'primary', type: 'submit', text: 'Use key' })]),
  ])))
  input.focus()
}

// The list refreshes itself while it is shown (new sessions, statuses, turns).
const LIST_REFRESH_MS = 5000

async function loadSessions(workspace, status) {
  const sessions = []
  let cursor
  for (let page = 0; page < 5; page++) {
    const query = new URLSearchParams({ workspace: workspace, limit: '200' })
    if (status) query.set('status', status)
    if (cursor) query.set('cursor', cursor)
    const body = await apiJson('/v1/sessions?' + query.toString())
    for (const session of body.sessions) sessions.push(session)
    cursor = body.cursor
    if (!cursor) break
  }
  // The server lists the most recently active first: the 1,000 shown are the latest active.
  return { sessions: sessions, more: Boolean(cursor) }
}

function sessionsTable(list, workspace) {
  const rows = list.sessions.map((s) =>
    el('tr', { 'data-session-id': s.session_id }, [
      el('td', { class: 'id', 'data-label': 'session' }, [el('a', { href: '#/sessions/' + encodeURIComponent(s.session_id), text: s.session_id })]),
      el('td', { class: 'state', 'data-label': 'status' }, listedState(s)),
      el('td', { 'data-label': 'turns', text: fmtInt(s.turn_count) }),
      el('td', { 'data-label': 'events', text: fmtInt(s.last_seq + 1) }),
      el('td', { 'data-label': 'last active', text: fmtTime(s.last_activity_at || s.updated_at) }),
      el('td', { class: 'title', 'data-label': 'title', text: s.title || '–' }),
    ]))
  return list.sessions.length
    ? el('table', { class: 'sessions', id: 'sessions' }, [
        el('thead', {}, [el('tr', {}, ['session', 'status', 'turns', 'events', 'last active', 'title'].map((h) => el('th', { text: h })))]),
        el('tbody', {}, rows),
      ])
    : el('p', { class: 'empty', id: 'sessions', text: 'No sessions in workspace "' + workspace + '".' })
}

// The status, and what an active session waits for: a turn running or interrupted (from its
// lease), a command, an approval or a plan.
function listedState(s) {
  const shown = [badge(s.status)]
  if (s.turn_state) shown.push(' ', badge(s.turn_state === 'interrupted' ? 'interrupted' : 'running', s.turn_state === 'interrupted' ? 'failed' : 'running'))
  else if (s.activity_state) shown.push(' ', badge(s.activity_state.replace(/_/g, ' '), 'other'))
  return shown
}

function listCount(list) {
  const n = list.sessions.length
  return fmtInt(n) + ' session' + (n === 1 ? '' : 's') + (list.more ? ' (the ' + n + ' latest active)' : '')
}

async function showList(workspace, status, signal) {
  render('loading', el('p', { class: 'empty', text: 'Loading sessions…' }))
  const list = await loadSessions(workspace, status)
  if (signal.aborted) return
  const workspaceInput = el('input', { name: 'workspace', value: workspace, 'aria-label': 'workspace', size: 14 })
  const statusSelect = el('select', { name: 'status', 'aria-label': 'status' }, ['', 'active', 'completed'].map((value) =>
    el('option', { value: value, selected: value === status, text: value || 'any status' })))
  const go = (event) => {
    event.preventDefault()
    const next = listHash(workspaceInput.value.trim() || 'default', statusSelect.value)
    if (location.hash === next) route()
    else location.hash = next
  }
  const count = el('span', { class: 'meta', id: 'list-count', text: listCount(list) })
  render('list', [
    el('h1', { text: 'Sessions' }),
    el('form', { class: 'toolbar', onsubmit: go }, [
      el('label', {}, ['workspace ', workspaceInput]),
      statusSelect,
      el('button', { type: 'submit', class: 'primary', text: 'Show' }),
      count,
    ]),
    sessionsTable(list, workspace),
  ])
  // Only the table and the count are replaced: the filter form keeps what is being typed.
  const refresh = () => setTimeout(() => {
    if (signal.aborted) return
    loadSessions(workspace, status).then((next) => {
      if (signal.aborted) return
      const shown = document.getElementById('sessions')
      if (shown) shown.replaceWith(sessionsTable(next, workspace))
      count.textContent = listCount(next)
    }).catch(() => {}).then(() => { if (!signal.aborted) refresh() })
  }, LIST_REFRESH_MS)
  refresh()
}

function showFacts(node, view) {
  const budget = view.budget || {}
  const cost = budget.cost_usd || {}
  const fact = (label, value, id) => el('div', {}, [el('dt', { text: label }), el('dd', { id: id }, value)])
  clear(node).appendChild(el('dl', { class: 'facts' }, [
    fact('status', [badge(view.status)], 'fact-status'),
    fact('workspace', view.workspace),
    fact('model', view.model || '–'),
    fact('turns', fmtInt(view.turn_count) + ' (' + fmtInt(view.num_turns) + ' model requests)'),
    fact('tokens', fmtUsage(view.usage)),
    fact('cost', typeof view.total_cost_usd === 'number' ? fmtUsd(view.total_cost_usd) + (typeof cost.max === 'number' ? ' of ' + fmtUsd(cost.max) : '') : 'unknown (no price for this model)', 'fact-cost'),
    budget.status && budget.status !== 'ok' ? fact('budget', [badge(budget.status.replace(/_/g, ' '), 'failed')]) : null,
    fact('created', fmtTime(view.created_at)),
    fact('updated', fmtTime(view.updated_at)),
  ]))
}

async function showSession(id, signal) {
  const facts = el('section', { class: 'panel', id: 'session-facts' }, [el('p', { class: 'empty', text: 'Loading…' })])
  const label = el('span', { class: 'label', text: 'connecting…' })
  const stream = el('div', { class: 'stream', id: 'stream', 'data-state': 'connecting', role: 'status', 'aria-live': 'polite' }, [el('span', { class: 'dot' }), label])
  const back = el('a', { href: '#/', text: '← all sessions' })
  const root = el('ol', { class: 'timeline', id: 'timeline', 'data-last-seq': '-1', 'data-event-count': '0' })
  const timeline = new Timeline(root)
  const title = el('p', { class: 'session-title', id: 'session-title', hidden: true })
  let refresh = () => {}
  const controls = new Controls(id, {
    timeline: timeline,
    refresh: () => refresh(),
    deleted: (workspace) => {
      location.hash = listHash(workspace, '')
    },
  })
  timeline.onFork = (n) => controls.fork(n)
  timeline.onOpenArtifact = (artifactId) => controls.openArtifact(artifactId)
  render('session', [el('p', {}, [back]), el('h1', {}, ['Session ', el('small', { text: id })]), title, facts, controls.node, stream, root])
  const ticker = setInterval(() => controls.tick(), 1000)
  signal.addEventListener('abort', () => clearInterval(ticker))

  // Events up to the session's last seq at opening are history: the page stays at the top
  // for them; a newer one scrolls into view when the reader is at the bottom already.
  let historyTo = Infinity
  let hooked = false
  const load = async () => {
    const view = await apiJson('/v1/sessions/' + encodeURIComponent(id))
    if (signal.aborted) return
    if (historyTo === Infinity) historyTo = view.last_seq
    hooked = !!(view.config && Array.isArray(view.config.hooks) && view.config.hooks.length)
    back.setAttribute('href', listHash(view.workspace, ''))
    title.textContent = view.title || ''
    title.hidden = !view.title
    showFacts(facts, view)
    timeline.setPrice(view.price)
    const activity = view.activity
    timeline.markWaiting(activity && activity.state === 'waiting' ? activity.item_id : undefined)
    controls.update(view)
  }
  const loadInputs = async () => {
    const inputs = await loadTurns(id)
    if (!signal.aborted) timeline.setInputs(inputs)
  }
  const loadKept = keptOutputsLoader(id, timeline, signal)
  await load()
  await loadInputs()
  loadKept()
  let pending = null
  refresh = () => {
    if (pending) return
    pending = setTimeout(() => {
      pending = null
      if (!signal.aborted) load().catch(() => {})
    }, 250)
  }
  // While the session is active, its state is read again every few seconds (a turn that ends
  // waiting on a command, or awaiting approval, says so only in its committed state).
  const poll = setInterval(() => {
    if (!timeline.completed) refresh()
  }, LIST_REFRESH_MS)
  signal.addEventListener('abort', () => clearInterval(poll))
  await followEvents(id, {
    signal: signal,
    lastSeq: () => timeline.last,
    finished: () => timeline.completed,
    onEvent: (seq, event) => {
      const atBottom = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 60
      timeline.apply(seq, event)
      if (/^(turn\.(started|completed|failed)|thread\.(completed|compact_boundary)|context\.reset|permission\.(requested|resolved)|plan\.approval\.(requested|resolved))$/.test(event.type)) refresh()
      if (event.type === 'turn.started' && !timeline.inputs.has(seq)) loadInputs().catch(() => {})
      if (seq > historyTo && mayBeKept(event, hooked)) loadKept()
      if (atBottom && seq > historyTo) window.scrollTo(0, document.documentElement.scrollHeight)
    },
    onState: (state, detail) => {
      stream.setAttribute('data-state', state)
      const text = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', ended: 'ended' }[state] || state
      label.textContent = detail ? text + ' — ' + detail : text
    },
    onError: (error) => {
      if (error.status === 401) return showKeyForm(error)
      stream.setAttribute('data-state', 'error')
      label.textContent = error.status + ' ' + error.code + ': ' + error.message
    },
  })
}

window.addEventListener('hashchange', route)
document.getElementById('forget-key').addEventListener('click', () => {
  storeKey('')
  route()
})
showForgetButton()
route()
`
