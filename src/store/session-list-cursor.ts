import { TurnlineError } from '../contract/errors.ts'
import { base64urlBytes, toBase64url } from '../shared/base64.ts'
import { assertSegment } from './session-ref.ts'

/**
 * The cursor of `GET /v1/sessions`: opaque to clients (base64url of a small JSON document), made
 * by the server from the last session of a page and validated when it comes back — bound to its
 * workspace and its order. Version 2 (the activity order): the walk's snapshot point `t` (the
 * activity index's clock at the first page, src/store/activity-walk.ts) and the last session
 * listed, its position in the walk `p` and its id `a`. A cursor of version 1 (the order by
 * creation it replaced) or one the server did not issue is 400 invalid_input, "list again".
 */
export interface ListCursor {
  workspace: string
  order: 'newest' | 'oldest'
  /** The walk's snapshot point (epoch ms of the index's clock). */
  asOf: number
  /** The last session listed: its position in the walk and its id. */
  after: { position: number; sessionId: string }
}

interface CursorBody {
  v: 2
  w: string
  o: 'n' | 'o'
  t: number
  p: number
  a: string
}

const MAX_CURSOR = 2048

export function encodeListCursor(cursor: ListCursor): string {
  const body: CursorBody = {
    v: 2,
    w: cursor.workspace,
    o: cursor.order === 'newest' ? 'n' : 'o',
    t: cursor.asOf,
    p: cursor.after.position,
    a: cursor.after.sessionId,
  }
  return base64url(JSON.stringify(body))
}

/** The cursor's walk, checked against the listing it is given to. */
export function decodeListCursor(
  cursor: string,
  workspace: string,
  order: 'newest' | 'oldest',
): ListCursor {
  const body = decode(cursor)
  if (body.w !== workspace) {
    throw invalid('this cursor belongs to another workspace; list again without cursor')
  }
  const made = body.o === 'n' ? 'newest' : 'oldest'
  if (made !== order) {
    throw invalid(`this cursor belongs to a ${made}-first listing; list again without cursor`)
  }
  return { workspace, order, asOf: body.t, after: { position: body.p, sessionId: body.a } }
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
  if (body !== null && typeof body === 'object' && (body as { v?: unknown }).v === 1) {
    throw invalid('this cursor is from an older listing order; list again without cursor')
  }
  if (
    body === null ||
    typeof body !== 'object' ||
    body.v !== 2 ||
    typeof body.w !== 'string' ||
    (body.o !== 'n' && body.o !== 'o') ||
    !isTime(body.t) ||
    !isTime(body.p) ||
    body.p > body.t ||
    typeof body.a !== 'string' ||
    !validId(body.a)
  ) {
    throw invalid('cursor is not one this server issued; list again without cursor')
  }
  return body as CursorBody
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
}

function validId(id: string): boolean {
  try {
    assertSegment('session_id', id)
    return true
  } catch {
    return false
  }
}

function invalid(message: string): TurnlineError {
  return new TurnlineError('invalid_input', message, { details: { field: 'query.cursor' } })
}

function base64url(text: string): string {
  return toBase64url(new TextEncoder().encode(text))
}

function fromBase64url(text: string): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(base64urlBytes(text))
}
