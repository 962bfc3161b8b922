/**
 * This process's environment without the loaders tap puts into NODE_OPTIONS for its own children
 * (processinfo, V8 coverage): what a command run as a user or operator would run it sees.
 */
export function userEnv(): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _tapLoaders, ...env } = process.env;
  return env;
}
