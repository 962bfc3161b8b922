import { posix } from 'node:path';

/** A relative link of a Markdown page: the page, the link as written, and the file it names. */
export interface RelativeLink {
  readonly page: string;
  readonly link: string;
  readonly target: string;
}

// `[text](target)` and `![alt](target)`, the target up to a space (a title) or the closing parenthesis.
const LINK = /!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g;
const FENCE = /^```[\s\S]*?^```/gm;

/**
 * The relative links of a page (`page` a path inside the package, with `/`), outside code blocks,
 * resolved against the page's folder: absolute URLs and links within the page (`#anchor`) are not
 * relative links.
 */
export function relativeLinks(page: string, markdown: string): RelativeLink[] {
  const prose = markdown.replace(FENCE, '');
  const links: RelativeLink[] = [];
  for (const match of prose.matchAll(LINK)) {
    const link = match[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('#')) continue;
    const path = link.split('#')[0]!;
    links.push({ page, link, target: posix.normalize(posix.join(posix.dirname(page), path)) });
  }
  return links;
}

/** The links among `links` that name no file of `files` (nor a folder holding one). */
export function deadLinks(links: readonly RelativeLink[], files: readonly string[]): RelativeLink[] {
  const shipped = new Set(files);
  return links.filter((l) => !shipped.has(l.target) && !files.some((f) => f.startsWith(`${l.target.replace(/\/$/, '')}/`)));
}
