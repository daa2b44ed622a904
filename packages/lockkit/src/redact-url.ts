/**
 * `url` with the password replaced by `***`, for messages and logs. Works on every URL form
 * lockkit accepts, including several hosts (`redis://:secret@h1:1,h2:2`).
 */
export function redactUrl(url: string): string {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return url;
  const [, scheme = '', authority = '', rest = ''] = match;
  const at = authority.lastIndexOf('@');
  if (at < 0) return url;
  const userInfo = authority.slice(0, at);
  const colon = userInfo.indexOf(':');
  if (colon < 0) return url;
  return `${scheme}${userInfo.slice(0, colon)}:***${authority.slice(at)}${rest}`;
}
