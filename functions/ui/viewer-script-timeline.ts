/**
 * The viewer script, part 3: the timeline of one session. Events are applied once each, in seq
 * order: turns become cards (status, usage, cost), items are updated in place from their
 * snapshots, tool outputs sit under their invocation, and compaction boundaries, context
 * resets, permission and plan events and the thread's result are markers between the turns.
 */
export const VIEWER_SCRIPT_TIMELINE = String.raw`
class Timeline {
  constructor(root) {
    this.root = root
    this.items = new Map()
    this.turns = []
    this.open = null
    this.price = undefined
    this.count = 0
    this.last = -1
    this.completed = false
    /** Each turn's recorded input by the seq of its turn.started (GET …/turns). */
    this.inputs = new Map()
    /** When the open turn started (epoch ms), for the live state's elapsed time. */
    this.runningSince = undefined
    /** Called with a turn's number by its "Fork from here" button. */
    this.onFork = undefined
    /** Called with an artifact id by the link of an input text or an output kept whole. */
    this.onOpenArtifact = undefined
    this.waitingItem = undefined
    /** Kept outputs by tool_output item id, and the newest snapshot of each tool_output item. */
    this.keptOutputs = new Map()
    this.outputItems = new Map()
    this.hookAnswers = new HookAnswerLinks(root)
  }

  setInputs(inputs) {
    this.inputs = inputs
    for (const turn of this.turns) this.showInput(turn)
    const open = this.open && inputs.get(this.open.seq)
    if (open) this.runningSince = Date.parse(open.started_at)
  }

  /** What the turn was asked, once, from the recorded inputs. */
  showInput(turn) {
    const entry = this.inputs.get(turn.seq)
    if (!entry || turn.inputShown) return
    turn.inputShown = true
    if (entry.turn_id && /^turn-[0-9]+$/.test(entry.turn_id)) turn.id = Number(entry.turn_id.slice(5))
    const input = entry.input || {}
    const parts = []
    for (const follow of input.follow_ups || []) {
      parts.push(el('div', { class: 'follow-up', text: 'Follow-up: ' + follow.text }))
      parts.push(...this.keptLinks(follow.input_artifacts))
    }
    const given = input.input
    if (typeof given === 'string') parts.push(el('div', { class: 'text', text: given }))
    else if (Array.isArray(given)) {
      for (const part of given) {
        if (part.type === 'input_text') parts.push(el('div', { class: 'text', text: part.text }))
        else if (part.type === 'input_image' && /^data:image\//.test(String(part.image_url))) parts.push(el('img', { class: 'input-image', src: part.image_url, alt: 'image input' }))
        else if (part.type === 'input_image') parts.push(el('div', { class: 'meta', text: 'image: ' + part.image_url }))
      }
    }
    parts.push(...this.keptLinks(input.input_artifacts))
    if (parts.length === 0) return
    clear(turn.input).appendChild(el('div', { class: 'kind', text: 'asked' }))
    append(turn.input, parts)
    turn.input.hidden = false
  }

  /** Texts kept whole as artifacts: the text shown is their preview; each link opens the whole. */
  keptLinks(artifacts) {
    return (artifacts || []).map((kept) => {
      const label = kept.artifact_id + ' (' + fmtInt(kept.size) + ' bytes, ' + fmtInt(kept.lines) + ' lines)'
      return el('div', { class: 'meta input-artifact' }, ['kept whole: ', artifactLink(kept.artifact_id, label, (id) => this.onOpenArtifact && this.onOpenArtifact(id))])
    })
  }

  /** The session's kept outputs by tool_output item id (GET …/artifacts): each output shows its link. */
  setKeptOutputs(kept) {
    this.keptOutputs = kept
    for (const [itemId, item] of this.outputItems) {
      if (kept.has(itemId)) renderItem(this.items.get(itemId), item, this.itemContext(itemId))
    }
    this.hookAnswers.add(kept).show(this.turns, this.last, (id) => this.onOpenArtifact && this.onOpenArtifact(id))
  }

  itemContext(itemId) {
    return { kept: this.keptOutputs.get(itemId), onOpenArtifact: (id) => this.onOpenArtifact && this.onOpenArtifact(id) }
  }

  /** Marks the item a turn waits on (a command still running) until the turn goes on. */
  markWaiting(itemId) {
    for (const id of [this.waitingItem, this.waitingItem && this.waitingItem + ':output']) {
      const node = id && this.items.get(id)
      if (node) node.removeAttribute('data-waiting')
    }
    this.waitingItem = itemId
    for (const id of [itemId, itemId && itemId + ':output']) {
      const node = id && this.items.get(id)
      if (node) node.setAttribute('data-waiting', '')
    }
  }

  apply(seq, event) {
    this.last = seq
    this.count += 1
    this.root.setAttribute('data-last-seq', String(seq))
    this.root.setAttribute('data-event-count', String(this.count))
    const handler = this['on_' + String(event.type).replace(/[^a-z_.]/g, '').replace(/\./g, '_')]
    if (typeof handler === 'function') handler.call(this, event, seq)
    else this.marker('other', String(event.type), [el('pre', { text: jsonText(event) })], seq)
    if (this.hookAnswers.waiting.length) this.hookAnswers.show(this.turns, seq, (id) => this.onOpenArtifact && this.onOpenArtifact(id))
  }

  /** Where new entries go: the open turn's list, else the timeline itself. */
  target() {
    return this.open ? this.open.list : this.root
  }

  marker(kind, title, body, seq) {
    const node = el('li', { class: 'marker ' + kind, 'data-seq': seq }, [el('div', { class: 'title', text: title })].concat(body || []))
    this.target().appendChild(node)
    return node
  }

  setPrice(price) {
    this.price = price
    for (const turn of this.turns) this.showCost(turn)
  }

  showCost(turn) {
    const cost = costOf(turn.usage, this.price)
    turn.cost.textContent = cost === undefined ? '' : fmtUsd(cost)
  }

  on_thread_started(event, seq) {
    this.marker('start', 'Thread started', [el('div', { class: 'meta', text: event.thread_id })], seq)
  }

  on_turn_started(event, seq) {
    const number = this.turns.length + 1
    const status = el('span', { class: 'turn-status' }, [badge('running', 'running')])
    const usage = el('span', { class: 'usage' })
    const cost = el('span', { class: 'cost', title: "estimated at the session's model price" })
    const list = el('ol', { class: 'items' })
    const input = el('div', { class: 'turn-input', hidden: true })
    const actions = el('span', { class: 'turn-actions' })
    const breakdown = event.token_breakdown
    const node = el('li', { class: 'turn running', 'data-turn': number, 'data-seq': seq }, [
      el('div', { class: 'turn-head' }, [el('h2', { text: 'Turn ' + number }), status, usage, cost, actions]),
      input,
      breakdown
        ? el('div', {
            class: 'meta',
            text:
              'prompt: ' + fmtInt(breakdown.system_prompt_tokens) + ' system · ' + fmtInt(breakdown.tool_schema_tokens) +
              ' tool schemas · ' + fmtInt(breakdown.message_history_tokens) + ' history tokens',
          })
        : null,
      list,
    ])
    this.root.appendChild(node)
    const turn = { number: number, id: number, seq: seq, node: node, list: list, status: status, usage: undefined, usageNode: usage, cost: cost, input: input, actions: actions }
    this.turns.push(turn)
    this.open = turn
    const known = this.inputs.get(seq)
    this.runningSince = known ? Date.parse(known.started_at) : Date.now()
    this.showInput(turn)
  }

  closeTurn(state, usage, message) {
    const turn = this.open || this.turns[this.turns.length - 1]
    if (!turn) return
    turn.node.className = 'turn ' + state
    clear(turn.status).appendChild(badge(state, state))
    if (usage) {
      turn.usage = usage
      turn.usageNode.textContent = fmtUsage(usage)
      this.showCost(turn)
    }
    if (message) turn.node.appendChild(el('div', { class: 'turn-error', text: message }))
    if (this.onFork && !turn.actions.firstChild) {
      const fork = () => this.onFork(turn.id)
      turn.actions.appendChild(el('button', { type: 'button', class: 'fork', 'data-fork-turn': turn.number, text: 'Fork from here', onclick: fork }))
    }
    this.open = null
    this.runningSince = undefined
  }

  on_turn_completed(event) {
    this.closeTurn('completed', event.usage)
  }

  on_turn_failed(event) {
    this.closeTurn('failed', event.usage, event.message)
  }

  on_item_started(event, seq) {
    this.item(event.item, seq)
  }

  on_item_updated(event, seq) {
    this.item(event.item, seq)
  }

  on_item_completed(event, seq) {
    this.item(event.item, seq)
  }

  item(item, seq) {
    if (!item || typeof item.id !== 'string') return
    let node = this.items.get(item.id)
    if (!node) {
      node = el('li', { class: 'item', 'data-item-id': item.id, 'data-seq': seq })
      this.items.set(item.id, node)
      const waiting = this.waitingItem
      if (waiting && (item.id === waiting || item.id === waiting + ':output')) node.setAttribute('data-waiting', '')
      // A tool's output goes under its invocation when that is on the page.
      const parent = item.type === 'tool_output' ? this.items.get(item.call_id) : undefined
      const slot = parent && parent.querySelector(':scope > .item-outputs')
      if (slot) slot.appendChild(node)
      else this.target().appendChild(node)
    }
    if (item.type === 'tool_output') this.outputItems.set(item.id, item)
    renderItem(node, item, this.itemContext(item.id))
  }

  on_thread_compact_boundary(event, seq) {
    const facts = [
      event.trigger + ' compaction, ' + event.mode + ' mode',
      fmtInt(event.original_message_count) + ' → ' + fmtInt(event.compacted_message_count) + ' messages',
    ]
    if (event.previous_segment_id || event.new_segment_id) {
      facts.push('segment ' + (event.previous_segment_id || '–') + ' → ' + (event.new_segment_id || '–'))
    }
    this.marker('boundary', 'Compaction boundary', [
      el('div', { text: facts.join(' · ') }),
      event.history_artifact_path ? el('div', { class: 'meta', text: 'history: ' + event.history_artifact_path }) : null,
    ], seq)
  }

  on_context_reset(event, seq) {
    const facts = [
      'trigger: ' + event.trigger,
      'context was ' + event.previous_context_usage_percent + '% full',
      event.plan_preserved ? 'plan preserved' : 'plan not preserved',
      event.tool_budget_reset ? 'tool budget reset' : 'tool budget kept',
    ]
    this.marker('reset', 'Context reset', [el('div', { text: facts.join(' · ') })], seq)
  }

  on_permission_requested(event, seq) {
    this.marker('permission', 'Permission requested: ' + event.tool_name, [], seq)
  }

  on_permission_resolved(event, seq) {
    const wait = typeof event.wait_ms === 'number' ? ' after ' + (event.wait_ms / 1000).toFixed(1) + ' s' : ''
    this.marker('permission', 'Permission ' + event.decision + ': ' + event.tool_name + wait, [], seq)
  }

  on_interjected(event, seq) {
    this.marker('interjected', 'Follow-up interjected (' + event.source + ', ' + event.redirect_kind + ')', [], seq)
  }

  on_plan_delta(event, seq) {
    if (this.items.has(event.item_id)) return
    let node = this.items.get('plan-delta:' + event.item_id)
    if (!node) {
      node = this.marker('plan', 'Plan (streaming)', [el('pre', { text: '' })], seq)
      this.items.set('plan-delta:' + event.item_id, node)
    }
    const pre = node.querySelector('pre')
    pre.textContent += event.delta
  }

  on_plan_approval_requested(event, seq) {
    this.marker('plan', 'Plan waiting for approval', event.plan_file ? [el('div', { class: 'meta', text: event.plan_file })] : [], seq)
  }

  on_plan_approval_resolved(event, seq) {
    this.marker('plan', 'Plan ' + event.decision + (event.automatic ? ' (automatic)' : ''), [], seq)
  }

  on_error(event, seq) {
    this.marker('error', 'Error', [el('div', { class: 'text', text: event.message })], seq)
  }

  on_thread_completed(event, seq) {
    this.completed = true
    this.open = null
    const ok = event.subtype === 'success'
    const facts = [event.outcome_code, fmtInt(event.num_turns) + ' model requests', fmtUsage(event.usage)]
    if (typeof event.total_cost_usd === 'number') facts.push('total ' + fmtUsd(event.total_cost_usd))
    const node = this.marker(ok ? 'result' : 'result failed', 'Thread completed', [
      el('div', {}, [badge(event.subtype, ok ? 'success' : 'failed'), ' ', el('span', { class: 'meta', text: facts.join(' · ') })]),
      event.result ? el('div', { class: 'text', text: event.result }) : null,
      event.stop_reason ? el('div', { class: 'meta', text: 'stop reason: ' + event.stop_reason }) : null,
    ], seq)
    node.setAttribute('data-outcome', event.outcome_code)
  }
}
`
