'use strict';
// The rule coordinators apply to text from a peer (dev.rollcall.api.PeerText): which characters they
// refuse in an answer, and how an error shows text that may hold them.

/**
 * Whether the character at {@code i} is one a coordinator refuses (controls, separators, bidi marks,
 * lone surrogates); the two halves of a surrogate pair are not.
 */
function refusedAt(s, i) {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff) {
    const next = s.charCodeAt(i + 1);
    return !(next >= 0xdc00 && next <= 0xdfff);
  }
  if (c >= 0xdc00 && c <= 0xdfff) {
    const previous = i > 0 ? s.charCodeAt(i - 1) : 0;
    return !(previous >= 0xd800 && previous <= 0xdbff);
  }
  return c < 0x20 || c === 0x7f || (c >= 0x80 && c < 0xa0)
      || c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069)
      || c === 0x200e || c === 0x200f || c === 0x061c;
}

/** The index of the first character a coordinator refuses, or -1. */
function unclean(s) {
  for (let i = 0; i < s.length; i++) {
    if (refusedAt(s, i)) {
      return i;
    }
  }
  return -1;
}

/**
 * {@code s} as an error or a log line may show it: refused characters escaped ({@code \n}, {@code \u001b}),
 * cut to {@code max} characters and "...(N more)", as PeerText.escape does, so it cannot forge a line.
 */
function escaped(s, max = 40) {
  let keep = Math.min(s.length, max);
  if (keep < s.length && keep > 0 && s.charCodeAt(keep - 1) >= 0xd800 && s.charCodeAt(keep - 1) <= 0xdbff) {
    keep--; // never split a surrogate pair
  }
  let out = '';
  for (let i = 0; i < keep; i++) {
    const ch = s[i];
    const named = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }[ch];
    out += named ?? (refusedAt(s, i) ? `\\u${s.charCodeAt(i).toString(16).padStart(4, '0')}` : ch);
  }
  return keep < s.length ? `${out}...(${s.length - keep} more)` : out;
}

module.exports = { unclean, escaped };
