/**
 * Stand-in for `ajv` and `ajv-formats` in the Worker bundle (infra/build/worker-bundle.mjs, its
 * alias). The MCP SDK imports Ajv for its default JSON Schema validator, but Turnline always
 * hands the client the @cfworker/json-schema validator (Ajv compiles schemas with `new Function`,
 * which workerd forbids anyway), so Ajv is never constructed; this keeps ~140 KB out of the bundle.
 */
export default class AjvUnavailable {
  constructor() {
    throw new Error('Ajv is not bundled in the Worker: pass a jsonSchemaValidator')
  }
}
