/**
 * What the main process and the preload agree on. Kept free of imports so the sandboxed
 * preload (bundled into one file, see electron-builder.yml) carries nothing else.
 */

/** The one invoke channel of the bridge: (name, args) in, a BridgeEnvelope out. */
export const BRIDGE_CHANNEL = 'bridge:call';

/** Main to renderer: the embedded server's status, sent whenever it changes (a crash included). */
export const EMBEDDED_STATUS_CHANNEL = 'embedded:status';

/**
 * The contract's call names reach the preload as one command-line switch of the renderer
 * (webPreferences.additionalArguments, readable as process.argv in a sandboxed preload), so the
 * preload checks names against the contract without importing the contract and its schemas.
 */
export const CALL_NAMES_SWITCH = '--gateway-console-calls=';

export function callNamesArgument(names: readonly string[]): string {
  return `${CALL_NAMES_SWITCH}${names.join(',')}`;
}

export function callNamesFromArgv(argv: readonly string[]): ReadonlySet<string> {
  const argument = argv.find((arg) => arg.startsWith(CALL_NAMES_SWITCH));
  if (!argument) return new Set();
  return new Set(argument.slice(CALL_NAMES_SWITCH.length).split(',').filter(Boolean));
}
