/**
 * `node:http` for the runner's servers and its egress proxy, taken as Node's builtin object
 * rather than through an ES module import. Importing it as a module makes Node build the
 * module's namespace, which reads every export: on Node 22 that includes the lazy `WebSocket`,
 * `CloseEvent` and `MessageEvent` getters, which load Node's bundled undici — ≈ 30 ms of CPU in
 * a runner's start, before its sandbox probe, for a client the runner does not use there
 * (docs/performance.md, cold start). Types are imported as types, which import nothing.
 */
export const nodeHttp = process.getBuiltinModule('node:http')
