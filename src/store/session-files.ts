import { TurnlineError } from '../contract/errors.ts'
import type { HistoryMessage } from '../contract/history-message.ts'
import {
  parseStoredFile,
  STORED_FILE_FORMAT,
  STORED_FILE_VERSION,
  type StoredFile,
  type StoredUserFile,
  type UserFile,
} from '../contract/stored-file.ts'
import type { ObjectStore } from '../ports/object-store.ts'
import { base64Bytes } from '../shared/base64.ts'
import { sha256Hex } from '../shared/sha256-hex.ts'
import { fromBytes, toBytes } from './json-bytes.ts'
import { putOnce } from './put-once.ts'

type AnyFile = UserFile | StoredUserFile
type UserMessage = Extract<HistoryMessage, { role: 'user' }>

/**
 * The documents of a session's user messages (`files`), kept once each in its folder
 * (`files/<sha256>.json`, format `turnline.file`, src/contract/stored-file.ts) as images are
 * (session-images.ts, which calls this for every message it stashes or loads): stored when the
 * batch that first holds them is committed and named there by reference, loaded back for each
 * model request and wherever the transcript leaves the session (a fork, a continued response).
 */
export class SessionFiles {
  private readonly folder: string
  private readonly loaded = new Map<string, Promise<string>>()

  /** `sessionRoot`: the session's root key, ending in '/'. */
  constructor(
    private readonly store: ObjectStore,
    sessionRoot: string,
  ) {
    this.folder = `${sessionRoot}files/`
  }

  /** The message with its inline documents stored and named by reference. */
  async stash(message: UserMessage): Promise<UserMessage> {
    if (!message.files?.some((file) => 'data' in file)) return message
    const files = await Promise.all(message.files.map((file) => this.stashFile(file)))
    return { ...message, files: files as [AnyFile, ...AnyFile[]] }
  }

  /** The message with its stored documents loaded back. */
  async load(message: UserMessage): Promise<UserMessage> {
    if (!message.files?.some((file) => 'sha256' in file)) return message
    const files = await Promise.all(
      message.files.map(async (file): Promise<UserFile> => {
        if ('data' in file) return file
        const data = await this.read(file)
        return { filename: file.filename, media_type: file.media_type, data }
      }),
    )
    return { ...message, files: files as [UserFile, ...UserFile[]] }
  }

  private async stashFile(file: AnyFile): Promise<AnyFile> {
    if (!('data' in file)) return file
    const bytes = base64Bytes(file.data)
    const sha256 = await sha256Hex(bytes)
    const stored: StoredFile = {
      format: STORED_FILE_FORMAT,
      version: STORED_FILE_VERSION,
      sha256,
      media_type: file.media_type,
      size: bytes.byteLength,
      data: file.data,
    }
    await putOnce(this.store, `${this.folder}${sha256}.json`, toBytes(JSON.stringify(stored)))
    return { filename: file.filename, sha256, media_type: file.media_type, size: stored.size }
  }

  private read(file: StoredUserFile): Promise<string> {
    let pending = this.loaded.get(file.sha256)
    if (!pending) {
      pending = (async () => {
        const object = await this.store.get(`${this.folder}${file.sha256}.json`)
        if (!object) {
          throw new TurnlineError(
            'corrupt_data',
            `file ${file.sha256.slice(0, 16)} of the transcript is missing from the session's folder`,
          )
        }
        return parseStoredFile(fromBytes(object.body, 'file'), file.sha256).data
      })()
      this.loaded.set(file.sha256, pending)
      pending.catch(() => this.loaded.delete(file.sha256))
    }
    return pending
  }
}

/** Whether a message holds documents inline (to store) or by reference (to load). */
export function hasFiles(message: HistoryMessage, form: 'inline' | 'stored'): boolean {
  return (
    message.role === 'user' &&
    (message.files ?? []).some((file) => (form === 'inline' ? 'data' in file : 'sha256' in file))
  )
}
