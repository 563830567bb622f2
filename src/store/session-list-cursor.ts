import { TurnlineError } from '../contract/errors.ts'
import { assertSegment } from './session-ref.ts'

/**
 * The cursor of `GET /v1/sessions`: opaque to clients (base64url of a small JSON document), made
 * by the server from the last entry of a page — never a storage continuation token — and
 * validated when it comes back: bound to its workspace, naming an entry of the sessions folder.
 * A cursor the server did not issue is 400 invalid_input; nothing in it or in the error names a
 * storage key.
 */
interface CursorBody {
  v: 1
  /** The workspace listed. */
  w: string
  /** The last entry returned, relative to the sessions folder: a session id or a file name. */
  a: string
  /** True when that entry was a session folder (the listing resumes after all of it). */
  f: boolean
  /** `n` for a newest-first listing (the next page holds the sessions before `a`). */
  o?: 'n'
}

const MAX_CURSOR = 2048

/** The cursor of an oldest-first page whose last session is `sessionId`. */
export function encodeSessionCursor(workspace: string, sessionId: string): string {
  const body: CursorBody = { v: 1, w: workspace, a: sessionId, f: true }
  return base64url(JSON.stringify(body))
}

/** The cursor of a newest-first page whose last session is `sessionId`. */
export function encodeNewestCursor(workspace: string, sessionId: string): string {
  const body: CursorBody = { v: 1, w: workspace, a: sessionId, f: true, o: 'n' }
  return base64url(JSON.stringify(body))
}

/** The session id a newest-first listing continues before. */
export function resumeBefore(cursor: string, workspace: string): string {
  const body = decodeFor(cursor, workspace)
  if (body.o !== 'n' || !body.f) {
    throw invalid('this cursor belongs to an oldest-first listing; list again without cursor')
  }
  return body.a
}

/**
 * The key a listing resumes after. Keys inside a session folder `<id>/` all sort before
 * `<id>0` ('/' < '0'), while a folder such as `<id>0/` or `<id>_x/` sorts after it.
 */
export function resumeAfter(cursor: string, workspace: string, root: string): string {
  const body = decodeFor(cursor, workspace)
  if (body.o !== undefined) {
    throw invalid('this cursor belongs to a newest-first listing; list again without cursor')
  }
  return body.f ? `${root}${body.a}0` : `${root}${body.a}`
}

function decodeFor(cursor: string, workspace: string): CursorBody {
  const body = decode(cursor)
  if (body.w !== workspace) {
    throw invalid('this cursor belongs to another workspace; list again without cursor')
  }
  return body
}

function decode(cursor: string): CursorBody {
  let value: unknown
  try {
    if (cursor.length > MAX_CURSOR || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('shape')
    value = JSON.parse(fromBase64url(cursor))
  } catch {
    throw invalid('cursor is not one this server issued; list again without cursor')
  }
  const body = value as Partial<CursorBody> | null
  if (
    body === null ||
    typeof body !== 'object' ||
    body.v !== 1 ||
    typeof body.w !== 'string' ||
    typeof body.a !== 'string' ||
    typeof body.f !== 'boolean' ||
    (body.o !== undefined && body.o !== 'n') ||
    !validName(body.a, body.f)
  ) {
    throw invalid('cursor is not one this server issued; list again without cursor')
  }
  return body as CursorBody
}

function validName(name: string, folder: boolean): boolean {
  if (folder) {
    try {
      assertSegment('session_id', name)
      return true
    } catch {
      return false
    }
  }
  // a file directly in the sessions folder: one name, no control characters
  if (name.length === 0 || name.length > 1024 || name.includes('/')) return false
  return Array.from(name).every((char) => (char.codePointAt(0) ?? 0) >= 0x20)
}

function invalid(message: string): TurnlineError {
  return new TurnlineError('invalid_input', message, { details: { field: 'query.cursor' } })
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text)
  let binary = ''
  for (const byte of bytes) binary += String.fromCharCode(byte)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

function fromBase64url(text: string): string {
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'))
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0))
  return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
}
