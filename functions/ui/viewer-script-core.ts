/**
 * The viewer script, part 1: DOM helpers, the API client (bearer key from sessionStorage) and
 * the followed events feed read as SSE over fetch (EventSource cannot send Authorization).
 * Plain browser JavaScript kept as a string so every runtime bundles it; no `innerHTML`: event
 * text is model and tenant content and only ever becomes text nodes.
 */
export const VIEWER_SCRIPT_CORE = `
const KEY_STORAGE = 'turnline.api_key'

function el(tag, props, children) {
  const node = document.createElement(tag)
  if (props) {
    for (const name of Object.keys(props)) {
      const value = props[name]
      if (value === undefined || value === null || value === false) continue
      if (name === 'class') node.className = value
      else if (name === 'text') node.textContent = String(value)
      else if (name.startsWith('on')) node.addEventListener(name.slice(2), value)
      else node.setAttribute(name, value === true ? '' : String(value))
    }
  }
  append(node, children)
  return node
}

function append(node, children) {
  if (children === undefined || children === null) return node
  const list = Array.isArray(children) ? children : [children]
  for (const child of list) {
    if (child === undefined || child === null || child === false) continue
    node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
  return node
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild)
  return node
}

function sleep(ms, signal) {
  return new Promise((resolve) => {
    if (signal && signal.aborted) return resolve()
    const timer = setTimeout(done, ms)
    function done() {
      clearTimeout(timer)
      if (signal) signal.removeEventListener('abort', done)
      resolve()
    }
    if (signal) signal.addEventListener('abort', done)
  })
}

const numberFormat = new Intl.NumberFormat('en-US')
const fmtInt = (n) => (typeof n === 'number' ? numberFormat.format(n) : '–')

function fmtUsd(value) {
  if (typeof value !== 'number' || !isFinite(value)) return '–'
  if (value === 0) return '$0'
  if (value < 0.01) return '$' + value.toFixed(6)
  return '$' + value.toFixed(4)
}

function fmtTime(iso) {
  const date = new Date(iso)
  return isNaN(date.getTime()) ? String(iso) : date.toLocaleString()
}

function fmtUsage(usage) {
  if (!usage) return ''
  let text = fmtInt(usage.input_tokens) + ' in'
  if (usage.cached_input_tokens) text += ' (' + fmtInt(usage.cached_input_tokens) + ' cached)'
  text += ' · ' + fmtInt(usage.output_tokens) + ' out tokens'
  return text
}

/** As the server accrues a session's cost: cached and cache-written input at their own prices. */
function costOf(usage, price) {
  if (!usage || !price) return undefined
  const cached = Math.min(usage.cached_input_tokens || 0, usage.input_tokens)
  const written = Math.min(usage.cache_creation_tokens || 0, usage.input_tokens - cached)
  const cachedPrice = price.cached_input === undefined ? price.input : price.cached_input
  const writePrice = price.cache_write === undefined ? price.input : price.cache_write
  return (
    (usage.input_tokens - cached - written) * price.input +
    cached * cachedPrice +
    written * writePrice +
    usage.output_tokens * price.output
  )
}

function badge(text, kind) {
  const known = ['active', 'running', 'in_progress', 'completed', 'success', 'failed', 'error', 'declined']
  const cls = known.indexOf(kind || text) >= 0 ? kind || text : 'other'
  return el('span', { class: 'badge ' + cls, text: text })
}

// ---- API client -------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

function storedKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) || ''
  } catch (error) {
    return ''
  }
}

function storeKey(key) {
  try {
    if (key) sessionStorage.setItem(KEY_STORAGE, key)
    else sessionStorage.removeItem(KEY_STORAGE)
  } catch (error) {
    // storage disabled: the key lives only as long as this page
  }
  memoryKey = key
  showForgetButton()
}

let memoryKey = storedKey()

function showForgetButton() {
  const button = document.getElementById('forget-key')
  if (button) button.hidden = !memoryKey
}

async function errorOf(response) {
  let code = 'http_' + response.status
  let message = response.statusText || 'request failed'
  try {
    const body = await response.json()
    if (body && body.error) {
      code = String(body.error.code)
      message = String(body.error.message)
    }
  } catch (error) {
    // not a JSON error body
  }
  return new ApiError(response.status, code, message)
}

async function api(path, init) {
  const options = Object.assign({ cache: 'no-store' }, init || {})
  const headers = new Headers(options.headers || {})
  if (memoryKey) headers.set('authorization', 'Bearer ' + memoryKey)
  options.headers = headers
  const response = await fetch(path, options)
  if (!response.ok) throw await errorOf(response)
  return response
}

async function apiJson(path) {
  return (await api(path)).json()
}

// ---- the followed events feed -----------------------------------------------------------

/**
 * Reads SSE frames from a fetch body (the shared decoder, part 0); resolves when the server
 * ends the stream.
 */
async function readSse(body, onFrame) {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const frames = new shared.SseDecoder()
  for (;;) {
    const chunk = await reader.read()
    if (chunk.done) return
    for (const frame of frames.push(decoder.decode(chunk.value, { stream: true }))) onFrame(frame)
  }
}

/**
 * Follows a session's events (history first, then live) until it completes or the signal
 * aborts. Every (re)connection asks for the events after the last one applied (Last-Event-ID),
 * and an event at or below it is dropped, so nothing is shown twice. A stream the server ends
 * (its follow window) is reopened at once; a dropped one after a growing delay.
 */
async function followEvents(sessionId, feed) {
  const path = '/v1/sessions/' + encodeURIComponent(sessionId) + '/events?follow=1'
  let failures = 0
  while (!feed.signal.aborted) {
    const headers = { accept: 'text/event-stream' }
    const last = feed.lastSeq()
    if (last >= 0) headers['last-event-id'] = String(last)
    const opened = Date.now()
    try {
      feed.onState(failures > 0 ? 'reconnecting' : 'connecting', '')
      const response = await api(path, { headers: headers, signal: feed.signal })
      feed.onState('live', '')
      await readSse(response.body, (frame) => {
        if (frame.event === 'error') {
          let message = frame.data
          try {
            message = JSON.parse(message).error.message
          } catch (error) {
            // keep the raw text
          }
          throw new ApiError(500, 'stream_error', message)
        }
        const seq = Number(frame.id)
        if (!Number.isInteger(seq) || seq <= feed.lastSeq()) return
        feed.onEvent(seq, JSON.parse(frame.data))
        failures = 0
      })
      if (feed.signal.aborted) return
      if (feed.finished()) return feed.onState('ended', 'the thread is completed')
      // The server's follow window ended: reopen (not in a tight loop if it ends at once).
      if (Date.now() - opened < 1000) await sleep(1000, feed.signal)
    } catch (error) {
      if (feed.signal.aborted) return
      if (error instanceof ApiError && (error.status === 401 || error.status === 404)) {
        return feed.onError(error)
      }
      failures += 1
      const delay = shared.backoffMs(failures - 1, { firstMs: 500, maxMs: 15000, jitter: 'none' })
      const why = error && error.message ? error.message : String(error)
      feed.onState('reconnecting', 'stream lost (' + why + '); retrying in ' + Math.ceil(delay / 100) / 10 + ' s')
      await sleep(delay, feed.signal)
    }
  }
}
`
