import { setFlagsFromString } from 'node:v8'

/**
 * Keeps the arrays that `map`, `filter` and their kin return of one kind for the life of the
 * process. Interpreted, those builtins return packed arrays; once TurboFan has inlined them into
 * an optimised caller (`--turbo-inline-array-builtins`, on by default), the same call returns a
 * holey array, whose hidden class differs. The engine passes such arrays on (a response's tool
 * calls, the offered tools, a batch's events and lines, the intents at a boundary), so each
 * caller optimised late hands a new kind of array to functions optimised earlier, which then
 * deoptimise on a "wrong map" and are compiled again — tens of times over the first minutes of
 * a server (docs/performance.md, "V8's warm path"). Without that inlining the builtins are
 * called as they are from the interpreter, and every array keeps the kind it was made with.
 * It changes no result, only the machine code, and is turned on before anything is optimised.
 */
export function keepArrayResultsPacked(): void {
  setFlagsFromString('--no-turbo-inline-array-builtins')
}
