import type { ResponseSettings, StreamEvent } from './types.ts'

/** What the bridge keeps of one output item while the response streams. */
export interface ItemState {
  /** Its output index; -1 for an extension item that is not shown. */
  index: number
  /** A call of a client's function: a `function_call` item whose arguments stream. */
  call?: { itemId: string; callId: string; name: string }
  /** The streamed text (or arguments) sent so far as deltas. */
  sent: string
  done: boolean
}

// Events without distributive Omit: each variant minus its sequence number.
type Unsequenced<E> = E extends StreamEvent ? Omit<E, 'sequence_number'> : never
export type Draft = Unsequenced<StreamEvent>
/** Sends one event; the bridge numbers it. */
export type Emit = (draft: Draft) => void

/** The id an output item is shown with, from the engine's (item-ids.ts). */
export type ItemIdScope = (engineId: string) => string

export interface BridgeOptions {
  responseId: string
  /** What the response echoes of its request; unset fields take the defaults. */
  settings?: Partial<ResponseSettings>
  /** Unix seconds the response was created; default the time of the first event. */
  createdAt?: number
  /** Unix milliseconds; default Date.now. Response times are written in whole seconds. */
  now?: () => number
  /**
   * Whether `vtcode:*` items and events are sent (default true). Without them the stream and the
   * response hold only what the specification defines, numbered as if the others never were.
   */
  extensions?: boolean
  /**
   * A response's turn ends its thread in the same commit (`end_after_turn`): the response ends
   * at `thread.completed`, whose stop reason tells a cut answer (`incomplete`). Default: at
   * `turn.completed`.
   */
  endAtThread?: boolean
  /** The ids its output items are shown with (item-ids.ts); default the engine's item ids. */
  itemIds?: ItemIdScope
  /**
   * The reasoning tokens within the output tokens of the response's usage, read as it ends (the
   * engine counts them, VT Code's usage does not carry them); default 0.
   */
  reasoningTokens?: () => number | undefined
}
