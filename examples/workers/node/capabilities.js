'use strict';
// What a worker says it can do (WorkerInfoResponse.capabilities), by the rules coordinators read
// them with (dev.rollcall.api.Capability and Capabilities): a worker that breaks one is left out.

const { escaped } = require('./peer-text');

const MAX_CAPABILITIES = 128;
const MAX_NAME_CHARS = 128;
const MAX_VERSION_CHARS = 64;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]*$/;
const NUMBER = '(?:0|[1-9][0-9]{0,8})';
const IDENTIFIER = '[0-9A-Za-z-]+';
const VERSION = new RegExp(`^${NUMBER}(?:\\.${NUMBER}){0,2}(?:-${IDENTIFIER}(?:\\.${IDENTIFIER})*)?`
    + `(?:\\+${IDENTIFIER}(?:\\.${IDENTIFIER})*)?$`);
/** What Java's String.strip() removes (Character.isWhitespace): not the no-break spaces. */
const EDGE_SPACE = /^[\t\n\u000b\f\r\u001c-\u001f \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029\u205f\u3000]+|[\t\n\u000b\f\r\u001c-\u001f \u1680\u2000-\u2006\u2008-\u200a\u2028\u2029\u205f\u3000]+$/g;

const MAX_LONG = '9223372036854775807';

/**
 * Whether every run of digits in the version's pre-release fits a Java long: coordinators compare
 * them as longs (semver4j) and refuse a larger one (SemVer itself sets no bound).
 */
function comparablePreRelease(version) {
  const core = version.split('+')[0];
  const dash = core.indexOf('-');
  const runs = dash < 0 ? [] : core.slice(dash + 1).match(/[0-9]+/g) ?? [];
  return runs.every((run) => {
    const n = run.replace(/^0+(?=.)/, '');
    return n.length < MAX_LONG.length || (n.length === MAX_LONG.length && n <= MAX_LONG);
  });
}

/** What is wrong with {@code c} ({name, version}), naming it, or null. */
function capabilityProblem(c) {
  if (c.name.length === 0) {
    return 'capability name is empty';
  }
  const name = `'${escaped(c.name)}'`;
  if (c.name.length > MAX_NAME_CHARS) {
    return `capability name ${name} is ${c.name.length} characters long (at most ${MAX_NAME_CHARS})`;
  }
  if (!NAME.test(c.name)) {
    return `capability name ${name} is not letters, digits and . _ : / - (starting with a letter or digit)`;
  }
  if (c.version.length > MAX_VERSION_CHARS) {
    return `capability ${name}: version '${escaped(c.version)}' is ${c.version.length} characters long`
        + ` (at most ${MAX_VERSION_CHARS})`;
  }
  if (c.version !== '' && !VERSION.test(c.version)) {
    return `capability ${name}: version '${escaped(c.version)}' is not a version`
        + ' (1, 1.2 or 1.2.3, then an optional -pre.release and +build)';
  }
  if (!comparablePreRelease(c.version)) {
    return `capability ${name}: version '${escaped(c.version)}' has a pre-release number larger than ${MAX_LONG}`;
  }
  return null;
}

/**
 * Reads {@code name} or {@code name=version} (e.g. {@code plan-protocol=3}), white space around
 * either ignored. Throws an Error naming the text and the rule it breaks.
 */
function parseCapability(text) {
  const t = text.replace(EDGE_SPACE, '');
  const eq = t.indexOf('=');
  const c = eq < 0 ? { name: t, version: '' }
    : { name: t.slice(0, eq).replace(EDGE_SPACE, ''), version: t.slice(eq + 1).replace(EDGE_SPACE, '') };
  const problem = capabilityProblem(c);
  if (problem) {
    throw new Error(problem);
  }
  return c;
}

/** {@code name} or {@code name=version}: what parseCapability reads. */
function capabilityText(c) {
  return c.version ? `${c.name}=${c.version}` : c.name;
}

/** Sorted by name, as coordinators keep them (names are ASCII: the code-unit order is Java's). */
function byName(capabilities) {
  return [...capabilities].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Why a coordinator would refuse {@code capabilities} (too many, a malformed one, a name twice), or null. */
function capabilitiesProblem(capabilities) {
  if (capabilities.length > MAX_CAPABILITIES) {
    return `${capabilities.length} capabilities (at most ${MAX_CAPABILITIES})`;
  }
  for (const c of capabilities) {
    const problem = capabilityProblem(c);
    if (problem) {
      return problem;
    }
  }
  const sorted = byName(capabilities);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i - 1].name === sorted[i].name) {
      return `capability '${sorted[i].name}' is given twice ('${capabilityText(sorted[i - 1])}'`
          + ` and '${capabilityText(sorted[i])}')`;
    }
  }
  return null;
}

module.exports = { parseCapability, capabilitiesProblem, capabilityText, byName, MAX_CAPABILITIES };
