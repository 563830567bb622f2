/**
 * The folders the server itself owns at the root of the session store (TURNLINE_DATA_DIR for the
 * filesystem store, `S3_PREFIX` in a bucket), beside one folder per tenant. A tenant with one of
 * these names would share a folder with the server's own files, so every way of creating a
 * tenant must refuse them (`STORE_ROOT_FOLDER_NAMES`).
 */
export const STORE_ROOT_FOLDERS = {
  /** The deployment's own objects: the key registry (`api-keys.json`), storage probes. */
  deployment: '.turnline',
  /** The filesystem store's working folder (temp and lock files). */
  fsWork: '.turnline-fs',
  /**
   * Where earlier versions kept the embedded runner's workspaces (`TURNLINE_DATA_DIR/runner`).
   * The runner now has a tree of its own (TURNLINE_RUNNER_ROOT); at start an old folder is
   * moved there (functions/entries/runner-layout.ts).
   */
  legacyRunner: 'runner',
} as const

/** Every name of STORE_ROOT_FOLDERS: no tenant may be called so. */
export const STORE_ROOT_FOLDER_NAMES: readonly string[] = Object.values(STORE_ROOT_FOLDERS)
