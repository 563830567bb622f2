/**
 * Text from outside (a model provider's error answer) with what looks like a credential replaced
 * by `[redacted]`: providers echo part of the key they refused (`Incorrect API key provided:
 * sk-proj-****WXYZ`, `Your api key: ****abcd is invalid`) and name the account a limit belongs
 * to (`in organization org-…`). Such text is the deployment's, never a tenant's, and stored
 * events, callbacks and answers carry it to tenants. The patterns err on the side of redacting.
 */
const REDACTED = '[redacted]'

const PATTERNS: readonly (readonly [RegExp, string])[] = [
  // Credentials inside a URL: user:password@ and signing or key query parameters (presigned S3).
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, `$1${REDACTED}@`],
  [
    /([?&](?:x-amz-[a-z-]+|signature|sig|key|api[-_]?key|apikey|token|access_token|auth)=)[^&#\s"'<>]*/gi,
    `$1${REDACTED}`,
  ],
  // Header-shaped: `Bearer <token>`, `Basic <base64>`.
  [/\b(bearer|basic)\s+[A-Za-z0-9._~+/=*-]{4,}/gi, `$1 ${REDACTED}`],
  // Named: `api key: …`, `x-api-key=…`, `token: "…"`, `password=…`.
  [
    /\b((?:x-)?(?:api[ _-]?key|access[ _-]?key|token|secret|password|authorization)["']?\s*[:=]\s*["']?)[^\s"',;]+/gi,
    `$1${REDACTED}`,
  ],
  // Key shapes of the providers and clouds: sk-…, sk-ant-…, rk-…, gsk_…, xai-…, AKIA…, AIza….
  [/\b(?:sk|rk|pk)[-_][A-Za-z0-9*_-]{3,}/g, REDACTED],
  [/\b(?:gsk|xai|hf|ghp|gho|github_pat)[-_][A-Za-z0-9*_-]{8,}/g, REDACTED],
  [/\b(?:AKIA|ASIA)[A-Z0-9]{12,}/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{20,}/g, REDACTED],
  // A masked fragment of a key (`****abcd`, `sk-…abcd` is caught above).
  [/\*{3,}[A-Za-z0-9_-]*/g, REDACTED],
  // The provider account a limit or key belongs to.
  [/\b(?:org|proj|acct)[-_][A-Za-z0-9]{6,}/g, REDACTED],
]

export function redactCredentials(text: string): string {
  let out = text
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement)
  return out
}
