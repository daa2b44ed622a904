import { InvalidArgumentError } from '@lockkit/core';

/** The parts of `scheme://[user[:password]@]host[:port][,host[:port]…][/path][?query]`. */
export interface UrlParts {
  /** Lower-case scheme without `:`. */
  readonly scheme: string;
  /** `user:password` as written (percent-encoded), or `''`. */
  readonly userInfo: string;
  /** The hosts as written, each `host`, `host:port`, `[v6]` or `[v6]:port`. */
  readonly hosts: readonly string[];
  /** `/path` as written, or `''`. */
  readonly path: string;
  /** The query without `?`, or `''`. */
  readonly query: string;
}

/**
 * Splits a URL whose authority may list several comma-separated hosts (which WHATWG `URL`
 * rejects). The URL must have the `scheme://` form and no `#fragment`.
 */
export function splitUrl(url: string, shownUrl: string): UrlParts {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/is.exec(url);
  if (!match) {
    throw new InvalidArgumentError(`Not a scheme://host URL: ${shownUrl}`);
  }
  const [, scheme = '', authority = '', path = '', query = '', fragment] = match;
  if (fragment !== undefined) {
    throw new InvalidArgumentError(`A lock URL has no #fragment: ${shownUrl}`);
  }
  const at = authority.lastIndexOf('@');
  const hostList = at < 0 ? authority : authority.slice(at + 1);
  return {
    scheme: scheme.toLowerCase(),
    userInfo: at < 0 ? '' : authority.slice(0, at),
    hosts: hostList === '' ? [] : hostList.split(','),
    path,
    query,
  };
}

/** `host[:port]` with `port` filled in when missing; rejects malformed hosts. */
export function withPort(host: string, defaultPort: number, shownUrl: string): string {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]]+)(?::(\d{1,5}))?$/i.exec(host);
  const port = match?.[2] === undefined ? defaultPort : Number(match[2]);
  if (!match || port < 1 || port > 65_535) {
    throw new InvalidArgumentError(`Host "${host}" in ${shownUrl} is not host[:port]`);
  }
  return `${match[1]}:${port}`;
}
