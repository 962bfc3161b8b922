/** Where a profile's frame comes from: its file relative to the repository, and what it belongs to. */
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { REPO_ROOT } from './processes.js';

/** A frame's file, relative to the repository (a `node:` module or other URL as it is). */
export function locationOf(url: string): string {
  if (url === '') return '';
  if (url.startsWith('file://')) {
    try {
      return relative(REPO_ROOT, fileURLToPath(url));
    } catch {
      return url;
    }
  }
  return url;
}

/**
 * What a frame belongs to: `tollgate core/<dir>`, `tollgate plugins/<name>`, `bench`, a dependency's
 * package name, `node internals`, or a V8 pseudo-frame (`(garbage collector)`, `(program)`).
 */
export function originOf(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : 'native';
  if (url.startsWith('node:')) return 'node internals';
  const path = locationOf(url);
  const modules = path.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const parts = path.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const parts = path.split('/');
  if (parts[0] === 'core') return parts.length > 2 ? `tollgate core/${parts[1]}` : 'tollgate core';
  if (parts[0] === 'plugins') return `tollgate plugins/${parts[1]}`;
  if (parts[0] === 'bench') return 'bench';
  return path;
}
