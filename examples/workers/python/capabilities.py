"""What a worker says it can do (WorkerInfoResponse.capabilities), by the rules coordinators read them
with (dev.rollcall.api.Capability and Capabilities): a worker that breaks one is left out."""

import re
from typing import NamedTuple

from peer_text import escaped

MAX_CAPABILITIES = 128
MAX_NAME_CHARS = 128
MAX_VERSION_CHARS = 64
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*")
_NUMBER = r"(?:0|[1-9][0-9]{0,8})"
_IDENTIFIER = r"[0-9A-Za-z-]+"
_VERSION = re.compile(rf"{_NUMBER}(?:\.{_NUMBER}){{0,2}}(?:-{_IDENTIFIER}(?:\.{_IDENTIFIER})*)?"
                      rf"(?:\+{_IDENTIFIER}(?:\.{_IDENTIFIER})*)?")
#: What Java's String.strip() removes (Character.isWhitespace): not the no-break spaces.
_EDGE_SPACE = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2008\u2009\u200a" \
              "\u2028\u2029\u205f\u3000"


_MAX_LONG = 2 ** 63 - 1


def _comparable_pre_release(version: str) -> bool:
    """Whether every run of digits in the version's pre-release fits a Java long: coordinators compare
    them as longs (semver4j) and refuse a larger one (SemVer itself sets no bound)."""
    core = version.partition("+")[0]
    _, dash, pre_release = core.partition("-")
    return not dash or all(int(run) <= _MAX_LONG for run in re.findall(r"[0-9]+", pre_release))


class Capability(NamedTuple):
    """One thing the worker can do; version "" when it has none."""
    name: str
    version: str = ""

    def __str__(self):
        return f"{self.name}={self.version}" if self.version else self.name


def capability_problem(c: Capability):
    """What is wrong with c, naming it, or None. Names are ASCII by the rule, so lengths are the coordinators'."""
    if not c.name:
        return "capability name is empty"
    name = f"'{escaped(c.name)}'"
    if len(c.name) > MAX_NAME_CHARS:
        return f"capability name {name} is {len(c.name)} characters long (at most {MAX_NAME_CHARS})"
    if not _NAME.fullmatch(c.name):
        return f"capability name {name} is not letters, digits and . _ : / - (starting with a letter or digit)"
    if len(c.version) > MAX_VERSION_CHARS:
        return (f"capability {name}: version '{escaped(c.version)}' is {len(c.version)} characters long"
                f" (at most {MAX_VERSION_CHARS})")
    if c.version and not _VERSION.fullmatch(c.version):
        return (f"capability {name}: version '{escaped(c.version)}' is not a version"
                " (1, 1.2 or 1.2.3, then an optional -pre.release and +build)")
    if not _comparable_pre_release(c.version):
        return f"capability {name}: version '{escaped(c.version)}' has a pre-release number larger than {_MAX_LONG}"
    return None


def parse_capability(text: str) -> Capability:
    """Reads name or name=version (e.g. plan-protocol=3), white space around either ignored; raises
    ValueError naming the text and the rule it breaks."""
    name, eq, version = text.strip(_EDGE_SPACE).partition("=")
    c = Capability(name.strip(_EDGE_SPACE), version.strip(_EDGE_SPACE) if eq else "")
    problem = capability_problem(c)
    if problem:
        raise ValueError(problem)
    return c


def by_name(capabilities):
    """Sorted by name, as coordinators keep them (names are ASCII: the code-point order is Java's)."""
    return sorted(capabilities, key=lambda c: c.name)


def capabilities_problem(capabilities):
    """Why a coordinator would refuse these capabilities (too many, a malformed one, a name twice), or None."""
    if len(capabilities) > MAX_CAPABILITIES:
        return f"{len(capabilities)} capabilities (at most {MAX_CAPABILITIES})"
    for c in capabilities:
        problem = capability_problem(c)
        if problem:
            return problem
    ordered = by_name(capabilities)
    for before, c in zip(ordered, ordered[1:]):
        if before.name == c.name:
            return f"capability '{c.name}' is given twice ('{before}' and '{c}')"
    return None
