/**
 * The viewer script, part 4: acting on one session through the public API with the page's key
 * — approve or deny a tool call, execute or reject a plan, send a turn or queue a follow-up,
 * continue a turn waiting on a command, cancel, fork at a turn, delete (each destructive one
 * asks first, in the page) — and the live state line with its elapsed time.
 */
export const VIEWER_SCRIPT_ACTIONS = String.raw`
function sessionPath(id, rest) {
  return '/v1/sessions/' + encodeURIComponent(id) + (rest || '')
}

function newKey() {
  if (window.crypto && typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  return Date.now().toString(16) + '-' + Math.random().toString(16).slice(2)
}

/** POST with a JSON body; turn-stepping calls carry a fresh Idempotency-Key. */
async function postJson(path, body, keyed) {
  const headers = { 'content-type': 'application/json' }
  if (keyed) headers['idempotency-key'] = newKey()
  const response = await api(path, { method: 'POST', headers: headers, body: JSON.stringify(body || {}) })
  return response.status === 204 ? null : response.json()
}

/**
 * Every entry of a paged listing of the session (at most 50 pages) from cursor on, added to
 * byKey by keyOf; answers the last page's resume (where it stopped reading).
 */
async function loadPaged(id, path, field, keyOf, byKey, from) {
  let cursor = from
  let resume = from
  for (let page = 0; page < 50; page++) {
    const query = new URLSearchParams({ limit: '200' })
    if (cursor) query.set('cursor', cursor)
    const body = await apiJson(sessionPath(id, path + '?' + query.toString()))
    for (const entry of body[field]) byKey.set(keyOf(entry), entry)
    resume = body.resume || resume
    cursor = body.cursor
    if (!cursor) break
  }
  return resume
}

/** GET …/turns as a map from the seq of each turn.started to its entry. */
async function loadTurns(id) {
  const bySeq = new Map()
  await loadPaged(id, '/turns', 'turns', (turn) => turn.seq, bySeq)
  return bySeq
}


/** The key of a listed kept output: a tool output's item id; a hook answer's own key. */
function keptKey(output) {
  return output.kind === 'hook_answer' ? 'hook:' + output.seq + ':' + output.hook_index + ':' + output.artifact_id : output.item_id
}

/**
 * Loads the session's kept outputs (GET …/artifacts) into the timeline, tool outputs by
 * tool_output item id, hook answers by keptKey; called again when an output that may be one
 * completes (mayBeKept), it reads only the batches committed since (the listing's resume), once
 * at a time, then once more if asked meanwhile.
 */
function keptOutputsLoader(id, timeline, signal) {
  const kept = new Map()
  let resume
  let loading = null
  let again = false
  const loadKept = () => {
    if (loading) {
      again = true
      return
    }
    loading = loadPaged(id, '/artifacts', 'outputs', keptKey, kept, resume)
      .then((through) => {
        resume = through
        if (!signal.aborted) timeline.setKeptOutputs(kept)
      })
      .catch(() => {})
      .finally(() => {
        loading = null
        if (again && !signal.aborted) {
          again = false
          loadKept()
        }
      })
  }
  return loadKept
}

/**
 * An event after which a kept output may be listed: a tool output completed that may have been
 * kept whole (a command's, spooled, or a preview naming an artifact); in a session with hooks,
 * also the end of a turn or a compaction (a hook answer kept whole names itself in no event).
 */
function mayBeKept(event, hooked) {
  if (hooked && /^(turn\.(completed|failed)|thread\.compact_boundary)$/.test(event.type)) return true
  const item = event.type === 'item.completed' ? event.item : undefined
  return !!item && item.type === 'tool_output' && (!!item.spool_path || KEPT_NOTICE.test(String(item.output || '')))
}

function fmtElapsed(ms) {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (s < 60) return s + ' s'
  const m = Math.floor(s / 60)
  if (m < 60) return m + ' min ' + (s % 60) + ' s'
  return Math.floor(m / 60) + ' h ' + (m % 60) + ' min'
}

/** What the session is doing now: its committed activity, else the timeline's open turn. */
function liveState(view, timeline, now) {
  if (!view) return { state: 'loading', text: 'loading…' }
  if (view.status === 'completed' || timeline.completed) return { state: 'completed', text: 'completed' }
  const since = (iso) => (iso ? ' for ' + fmtElapsed(now - Date.parse(iso)) : '')
  const activity = view.activity
  if (activity && activity.state === 'awaiting_plan_approval') return { state: 'awaiting_plan_approval', text: 'plan awaiting approval' + since(activity.since) }
  if (activity && activity.state === 'awaiting_approval') {
    const what = activity.tool_name + (activity.command ? ' (' + activity.command + ')' : '')
    return { state: 'awaiting_approval', text: 'awaiting approval: ' + what + since(activity.since) }
  }
  if (activity && activity.state === 'waiting') {
    const what = activity.command || activity.tool_name || 'a tool'
    return { state: 'waiting', text: 'waiting on a command: ' + what + ' — running' + since(activity.since) }
  }
  if (activity && activity.turn_state === 'interrupted') return { state: 'interrupted', text: 'turn interrupted — nobody is running it (its server stopped mid-turn); resume it' }
  if (activity && activity.turn_state === 'running') return { state: 'running', text: 'turn running' + (timeline.runningSince ? ' for ' + fmtElapsed(now - timeline.runningSince) : '') }
  if (timeline.open) return { state: 'running', text: 'turn running' + (timeline.runningSince ? ' for ' + fmtElapsed(now - timeline.runningSince) : '') }
  return { state: 'idle', text: 'idle — send a message to start a turn' }
}

class Controls {
  constructor(id, hooks) {
    this.id = id
    this.hooks = hooks
    this.view = undefined
    this.state = 'loading'
    this.asking = undefined
    this.line = el('div', { class: 'live-state', id: 'live-state', 'data-state': 'loading', role: 'status' })
    this.buttons = el('div', { class: 'actions', id: 'actions' })
    this.message = el('div', { class: 'meta', id: 'action-message', role: 'status', 'aria-live': 'polite' })
    this.text = el('textarea', { id: 'composer-text', rows: 2, 'aria-label': 'message', placeholder: 'Message' })
    this.send = el('button', { type: 'submit', class: 'primary', id: 'composer-send', text: 'Send' })
    this.composer = el('form', { class: 'composer', id: 'composer', onsubmit: (event) => this.submit(event) }, [this.text, this.send])
    this.node = el('section', { class: 'panel controls', id: 'controls' }, [this.line, this.buttons, this.composer, this.message])
  }

  update(view) {
    this.view = view
    this.render()
  }

  /** Refreshes the state line (its elapsed time); rebuilds the buttons when the state changes. */
  tick() {
    const live = liveState(this.view, this.hooks.timeline, Date.now())
    this.line.textContent = live.text
    this.line.setAttribute('data-state', live.state)
    if (live.state !== this.state) {
      this.state = live.state
      this.render()
    }
  }

  render() {
    const live = liveState(this.view, this.hooks.timeline, Date.now())
    // A question being asked stays until it is answered or the state changes under it.
    if (this.asking === live.state) return
    this.asking = undefined
    this.state = live.state
    this.line.textContent = live.text
    this.line.setAttribute('data-state', live.state)
    const active = this.view && this.view.status === 'active' && live.state !== 'completed'
    const activity = this.view && this.view.activity
    const button = (id, label, onclick, cls) => el('button', { type: 'button', id: id, class: cls || '', text: label, onclick: onclick })
    const list = []
    if (live.state === 'awaiting_approval') {
      list.push(button('approve', 'Approve', () => this.decide('allow'), 'primary'))
      list.push(button('deny', 'Deny', () => this.decide('deny')))
    }
    if (live.state === 'awaiting_plan_approval') {
      list.push(button('plan-execute', 'Execute plan', () => this.plan('execute'), 'primary'))
      list.push(button('plan-reject', 'Reject plan', () => this.plan('cancel')))
    }
    if (live.state === 'interrupted') list.push(button('resume', 'Resume the turn', () => this.run('resumed', () => postJson(sessionPath(this.id, '/turns'), {}, true)), 'primary'))
    if (live.state === 'waiting') list.push(button('continue', 'Check the command now', () => this.run('continued', () => postJson(sessionPath(this.id, '/turns'), {}, true))))
    if (active) list.push(button('cancel', 'Cancel…', () => this.confirm('End this session as cancelled? A running turn stops.', 'Cancel session', () => this.cancel())))
    list.push(button('delete', 'Delete…', () => this.confirm('Delete this session and everything of it? This cannot be undone.', 'Delete for good', () => this.remove()), 'danger'))
    clear(this.buttons)
    append(this.buttons, list)
    this.composer.hidden = !active || Boolean(activity && activity.state !== 'open' && activity.state !== 'waiting')
    this.send.textContent = this.hooks.timeline.open || (activity && activity.state === 'waiting') ? 'Queue follow-up' : 'Send'
  }

  /** Asks in the page (not a browser dialog, which phones and automation handle badly). */
  confirm(question, yes, action) {
    this.asking = this.state
    clear(this.buttons)
    append(this.buttons, [
      el('span', { class: 'question', text: question }),
      el('button', { type: 'button', id: 'confirm-yes', class: 'danger', text: yes, onclick: () => {
        this.asking = undefined
        action()
      } }),
      el('button', { type: 'button', id: 'confirm-no', text: 'Keep', onclick: () => {
        this.asking = undefined
        this.render()
      } }),
    ])
  }

  /** Runs one call; its outcome goes to the message line and the page is refreshed. */
  async run(done, call) {
    this.message.textContent = 'working…'
    this.message.removeAttribute('data-error')
    try {
      const answer = await call()
      this.message.textContent = done + (answer && answer.status ? ' (turn ' + answer.status + ')' : '')
    } catch (error) {
      this.message.setAttribute('data-error', '')
      this.message.textContent = error instanceof ApiError ? error.status + ' ' + error.code + ': ' + error.message : String(error)
    }
    this.hooks.refresh()
    this.render()
  }

  /** Opens an artifact of the session (a long input text, a kept output) as plain text in a new tab. */
  async openArtifact(artifactId) {
    try {
      const response = await api(sessionPath(this.id, '/artifacts/' + encodeURIComponent(artifactId)))
      const text = new Blob([await response.arrayBuffer()], { type: 'text/plain; charset=utf-8' })
      const url = URL.createObjectURL(text)
      window.open(url, '_blank')
      setTimeout(() => URL.revokeObjectURL(url), 60000)
    } catch (error) {
      this.message.setAttribute('data-error', '')
      this.message.textContent = error instanceof ApiError ? error.status + ' ' + error.code + ': ' + error.message : String(error)
    }
  }

  decide(decision) {
    const tool = this.view.activity.tool_name
    return this.run(decision === 'allow' ? 'approved' : 'denied', async () => {
      await postJson(sessionPath(this.id, '/permissions'), { tool_name: tool, decision: decision }, true)
      this.hooks.refresh()
      return postJson(sessionPath(this.id, '/turns'), {}, true)
    })
  }

  plan(decision) {
    return this.run(decision === 'execute' ? 'plan approved' : 'plan rejected', () => postJson(sessionPath(this.id, '/plan-approval'), { decision: decision }, true))
  }

  cancel() {
    return this.run('cancelled', () => postJson(sessionPath(this.id, '/cancel'), {}, true))
  }

  async remove() {
    this.message.textContent = 'deleting…'
    try {
      await api(sessionPath(this.id), { method: 'DELETE' })
      this.hooks.deleted(this.view ? this.view.workspace : 'default')
    } catch (error) {
      this.message.setAttribute('data-error', '')
      this.message.textContent = error instanceof ApiError ? error.status + ' ' + error.code + ': ' + error.message : String(error)
      this.render()
    }
  }

  /** A new turn when none is open; a follow-up for the open one otherwise. */
  submit(event) {
    event.preventDefault()
    const text = this.text.value.trim()
    if (!text) return
    this.text.value = ''
    const activity = this.view && this.view.activity
    if (this.hooks.timeline.open || (activity && activity.state === 'waiting')) {
      return this.run('follow-up queued', () => postJson(sessionPath(this.id, '/intents'), { text: text }))
    }
    return this.run('sent', () => postJson(sessionPath(this.id, '/turns'), { input: text }, true))
  }

  /** Forks at turn n and opens the fork. */
  async fork(n) {
    this.message.textContent = 'forking at turn ' + n + '…'
    try {
      const forked = await postJson(sessionPath(this.id, '/fork'), { at_turn: n }, true)
      location.hash = '#/sessions/' + encodeURIComponent(forked.session_id)
    } catch (error) {
      this.message.setAttribute('data-error', '')
      this.message.textContent = error instanceof ApiError ? error.status + ' ' + error.code + ': ' + error.message : String(error)
    }
  }
}
`
