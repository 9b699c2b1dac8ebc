"""The rule coordinators apply to text from a peer (dev.rollcall.api.PeerText): which characters they
refuse in an answer, and how an error shows text that may hold them."""


def refused(ch: str) -> bool:
    """Whether a coordinator refuses this character (controls, separators, bidi marks, surrogates)."""
    c = ord(ch)
    return (c < 0x20 or c == 0x7F or 0x80 <= c < 0xA0 or c in (0x2028, 0x2029, 0x200E, 0x200F, 0x061C)
            or 0x202A <= c <= 0x202E or 0x2066 <= c <= 0x2069 or 0xD800 <= c <= 0xDFFF)


def unclean(s: str) -> int:
    """The index of the first character a coordinator refuses, or -1."""
    for i, ch in enumerate(s):
        if refused(ch):
            return i
    return -1


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(s: str, limit: int = 40) -> str:
    """s as an error or a log line may show it: refused characters escaped (\\n, \\u001b), cut to limit
    characters and "...(N more)", as PeerText.escape does, so that it cannot forge a line."""
    shown = "".join(_NAMED.get(ch) or (f"\\u{ord(ch):04x}" if refused(ch) else ch) for ch in s[:limit])
    return shown if len(s) <= limit else f"{shown}...({len(s) - limit} more)"
