/**
 * A strict XML 1.0 parser for the documents tidemark writes, and the JUnit schema CI tools
 * validate them against. No XML parser is among the dependencies, and a lenient one would
 * defeat the purpose: this one rejects what the specification forbids (a character outside
 * the Char production, an unknown entity, a `<` in an attribute, a duplicate attribute, a
 * mismatched tag, `]]>` in text, a second root) and builds the element tree for the schema.
 * No DTD: tidemark writes none, so a DOCTYPE is rejected too.
 */
export interface XmlElement {
  readonly name: string;
  readonly attributes: ReadonlyMap<string, string>;
  readonly children: readonly (XmlElement | string)[];
}

export class XmlError extends Error {
  override name = 'XmlError';
}

// The Char, NameStartChar and NameChar productions of XML 1.0 (fifth edition).
const CHAR = /^[\t\n\r\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]*$/u;
const NAME_START = ':A-Z_a-z\\xc0-\\xd6\\xd8-\\xf6\\xf8-\\u02ff\\u0370-\\u037d\\u037f-\\u1fff\\u200c-\\u200d\\u2070-\\u218f\\u2c00-\\u2fef\\u3001-\\ud7ff\\uf900-\\ufdcf\\ufdf0-\\ufffd\\u{10000}-\\u{effff}';
const NAME = new RegExp(`[${NAME_START}][${NAME_START}\\-.0-9\\xb7\\u0300-\\u036f\\u203f-\\u2040]*`, 'uy');
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

export function parseXml(doc: string): XmlElement {
  if (!CHAR.test(doc)) {
    let bad = 0;
    for (const c of doc) {
      if (!CHAR.test(c)) break;
      bad += c.length;
    }
    throw new XmlError(`character U+${doc.codePointAt(bad)!.toString(16).toUpperCase().padStart(4, '0')} at offset ${bad} is not allowed in XML`);
  }
  let i = 0;
  const fail = (what: string): never => {
    throw new XmlError(`${what} at offset ${i}: ${JSON.stringify(doc.slice(i, i + 30))}`);
  };
  const space = (): boolean => {
    const start = i;
    while (/[ \t\r\n]/.test(doc[i] ?? '')) i++;
    return i > start;
  };
  const name = (): string => {
    NAME.lastIndex = i;
    const m = NAME.exec(doc);
    if (!m) return fail('expected a name');
    i += m[0].length;
    return m[0];
  };
  const expect = (s: string): void => {
    if (!doc.startsWith(s, i)) fail(`expected ${JSON.stringify(s)}`);
    i += s.length;
  };
  /** `&...;` at i, resolved. */
  const reference = (): string => {
    const m = /^&(?:#([0-9]+)|#x([0-9a-fA-F]+)|([^\s;&<]+));/.exec(doc.slice(i, i + 40));
    if (!m) return fail('a malformed reference');
    let out: string;
    if (m[3] !== undefined) {
      out = PREDEFINED[m[3]] ?? fail(`undefined entity &${m[3]};`);
    } else {
      const code = parseInt(m[1] ?? m[2]!, m[1] !== undefined ? 10 : 16);
      out = code <= 0x10ffff ? String.fromCodePoint(code) : '';
      if (out === '' || !CHAR.test(out)) fail(`character reference to a character XML does not allow (${code})`);
    }
    i += m[0].length;
    return out;
  };
  const comment = (): void => {
    expect('<!--');
    const end = doc.indexOf('-->', i);
    if (end < 0) fail('an unterminated comment');
    if (doc.slice(i, end).includes('--') || (end > i && doc[end - 1] === '-')) fail("'--' inside a comment");
    i = end + 3;
  };
  const pi = (): void => {
    expect('<?');
    const target = name();
    if (target.toLowerCase() === 'xml') fail('an XML declaration that is not at the start');
    const end = doc.indexOf('?>', i);
    if (end < 0) fail('an unterminated processing instruction');
    i = end + 2;
  };
  const misc = (): void => {
    for (;;) {
      space();
      if (doc.startsWith('<!--', i)) comment();
      else if (doc.startsWith('<?', i)) pi();
      else return;
    }
  };
  const element = (): XmlElement => {
    expect('<');
    const tag = name();
    const attributes = new Map<string, string>();
    for (;;) {
      const spaced = space();
      if (doc.startsWith('/>', i)) {
        i += 2;
        return { name: tag, attributes, children: [] };
      }
      if (doc[i] === '>') {
        i++;
        break;
      }
      if (!spaced) fail('expected whitespace before an attribute');
      const key = name();
      space();
      expect('=');
      space();
      const quote = doc[i];
      if (quote !== '"' && quote !== "'") fail('an unquoted attribute value');
      i++;
      let value = '';
      while (doc[i] !== quote) {
        const c = doc[i];
        if (c === undefined) fail('an unterminated attribute value');
        if (c === '<') fail("'<' in an attribute value");
        if (c === '&') value += reference();
        else {
          // Attribute-value normalisation: literal white space becomes a space.
          value += /[\t\n\r]/.test(c!) ? ' ' : c;
          i++;
        }
      }
      i++;
      if (attributes.has(key)) fail(`a duplicate attribute ${key}`);
      attributes.set(key, value);
    }
    const children: (XmlElement | string)[] = [];
    let text = '';
    const flush = (): void => {
      if (text !== '') children.push(text);
      text = '';
    };
    for (;;) {
      if (i >= doc.length) fail(`an unclosed <${tag}>`);
      if (doc.startsWith('</', i)) {
        i += 2;
        const closing = name();
        if (closing !== tag) fail(`</${closing}> closing <${tag}>`);
        space();
        expect('>');
        flush();
        return { name: tag, attributes, children };
      }
      if (doc.startsWith('<!--', i)) comment();
      else if (doc.startsWith('<![CDATA[', i)) {
        const end = doc.indexOf(']]>', i);
        if (end < 0) fail('an unterminated CDATA section');
        text += doc.slice(i + 9, end);
        i = end + 3;
      } else if (doc.startsWith('<?', i)) pi();
      else if (doc[i] === '<') {
        flush();
        children.push(element());
      } else if (doc[i] === '&') text += reference();
      else {
        if (doc.startsWith(']]>', i)) fail("']]>' in text");
        text += doc[i] === '\r' ? (doc[i + 1] === '\n' ? '' : '\n') : doc[i];
        i++;
      }
    }
  };

  if (doc.startsWith('<?xml', i)) {
    const end = doc.indexOf('?>', i);
    if (end < 0) fail('an unterminated XML declaration');
    if (!/^<\?xml\s+version\s*=\s*(["'])1\.[0-9]+\1(\s+encoding\s*=\s*(["'])[A-Za-z][A-Za-z0-9._-]*\3)?(\s+standalone\s*=\s*(["'])(yes|no)\5)?\s*$/.test(doc.slice(i, end))) fail('a malformed XML declaration');
    i = end + 2;
  }
  misc();
  if (doc.startsWith('<!DOCTYPE', i)) fail('a DOCTYPE (tidemark writes none)');
  if (doc[i] !== '<') fail('expected the root element');
  const root = element();
  misc();
  if (i !== doc.length) fail('content after the root element');
  return root;
}

/** The pattern of xs:dateTime without a zone that the strictest JUnit schema (Apache Ant's) asks of `timestamp`. */
const TIMESTAMP = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$/;
/** SUREFIRE_TIME of the Jenkins/Surefire schema, anchored as XSD patterns are. */
const SUREFIRE_TIME = /^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$/;

interface Rule {
  readonly required: readonly string[];
  readonly optional: readonly string[];
  /** Child elements allowed, in any order and number; null: text only (mixed or xs:string). */
  readonly children: readonly string[] | null;
}

/**
 * The structure of the JUnit schema that Jenkins (xunit's junit-10.xsd) and Maven Surefire
 * use, which GitLab, GitHub and most CI tools read: allowed elements, their required and
 * allowed attributes, and which elements may hold which. `failure`, `error` and `skipped`
 * are mixed content with no child elements; `system-out` and `system-err` are strings.
 */
const JUNIT: Record<string, Rule> = {
  testsuites: { required: [], optional: ['name', 'time', 'tests', 'failures', 'errors'], children: ['testsuite'] },
  testsuite: {
    required: ['name', 'tests', 'failures', 'errors'],
    optional: ['group', 'time', 'skipped', 'timestamp', 'hostname', 'id', 'package', 'file', 'log', 'url'],
    children: ['testsuite', 'properties', 'testcase', 'system-out', 'system-err'],
  },
  properties: { required: [], optional: [], children: ['property'] },
  property: { required: ['name', 'value'], optional: [], children: [] },
  testcase: {
    required: ['name'],
    optional: ['time', 'classname', 'group'],
    children: ['skipped', 'error', 'failure', 'rerunFailure', 'rerunError', 'flakyFailure', 'flakyError', 'system-out', 'system-err'],
  },
  failure: { required: [], optional: ['type', 'message'], children: null },
  error: { required: [], optional: ['type', 'message'], children: null },
  skipped: { required: [], optional: ['type', 'message'], children: null },
  'system-out': { required: [], optional: [], children: null },
  'system-err': { required: [], optional: [], children: null },
};

/** Everything in a document that the JUnit schema rejects, as one line each; empty when it validates. */
export function junitSchemaErrors(root: XmlElement): string[] {
  const errors: string[] = [];
  const visit = (e: XmlElement, path: string): void => {
    const here = `${path}/${e.name}`;
    const rule = JUNIT[e.name];
    if (!rule) {
      errors.push(`${here}: element not in the schema`);
      return;
    }
    for (const a of rule.required) if (!e.attributes.has(a)) errors.push(`${here}: missing required attribute ${a}`);
    for (const a of e.attributes.keys()) if (!rule.required.includes(a) && !rule.optional.includes(a)) errors.push(`${here}: attribute ${a} not allowed`);
    const time = e.attributes.get('time');
    if ((e.name === 'testsuite' || e.name === 'testsuites') && time !== undefined && !SUREFIRE_TIME.test(time)) errors.push(`${here}: time ${JSON.stringify(time)} is not a SUREFIRE_TIME`);
    for (const child of e.children) {
      if (typeof child === 'string') {
        if (rule.children !== null && child.trim() !== '') errors.push(`${here}: text in element-only content: ${JSON.stringify(child.slice(0, 40))}`);
      } else if (rule.children === null || !rule.children.includes(child.name)) {
        errors.push(`${here}: <${child.name}> not allowed here`);
      } else visit(child, here);
    }
  };
  if (root.name !== 'testsuites' && root.name !== 'testsuite') errors.push(`/${root.name}: the root must be testsuites or testsuite`);
  visit(root, '');
  return errors;
}

/**
 * What CI tools rely on beyond the schema's structure, as tidemark promises it: every test
 * case and suite timed in seconds, the suite stamped in the strict schema's form, and the
 * counts equal to the cases they count.
 */
export function junitReportErrors(root: XmlElement): string[] {
  const errors: string[] = [];
  const elements = (e: XmlElement, name: string): XmlElement[] => e.children.filter((c): c is XmlElement => typeof c !== 'string' && c.name === name);
  const suites = root.name === 'testsuites' ? elements(root, 'testsuite') : [root];
  let all = 0;
  for (const suite of suites) {
    const cases = elements(suite, 'testcase');
    all += cases.length;
    const counted = (kind: string): number => cases.filter((c) => elements(c, kind).length > 0).length;
    const expected: Record<string, number> = { tests: cases.length, failures: counted('failure'), errors: counted('error'), skipped: counted('skipped') };
    for (const [attribute, n] of Object.entries(expected)) {
      if (suite.attributes.get(attribute) !== String(n)) errors.push(`testsuite ${attribute}="${suite.attributes.get(attribute)}" but ${n} cases`);
    }
    if (!/^[0-9]+\.[0-9]{3}$/.test(suite.attributes.get('time') ?? '')) errors.push(`testsuite time ${suite.attributes.get('time')} is not seconds with milliseconds`);
    if (!TIMESTAMP.test(suite.attributes.get('timestamp') ?? '')) errors.push(`testsuite timestamp ${suite.attributes.get('timestamp')} is not yyyy-mm-ddThh:mm:ss`);
    for (const c of cases) if (!/^[0-9]+\.[0-9]{3}$/.test(c.attributes.get('time') ?? '')) errors.push(`testcase ${c.attributes.get('name')}: time ${c.attributes.get('time')} is not seconds with milliseconds`);
  }
  if (root.name === 'testsuites' && root.attributes.get('tests') !== String(all)) errors.push(`testsuites tests="${root.attributes.get('tests')}" but ${all} cases`);
  return errors;
}

/** Every test case as `classname > name`, in document order: what a CI tool keys history by. */
export function caseNames(root: XmlElement): string[] {
  const out: string[] = [];
  const visit = (e: XmlElement): void => {
    if (e.name === 'testcase') out.push(`${e.attributes.get('classname')} > ${e.attributes.get('name')}`);
    for (const c of e.children) if (typeof c !== 'string') visit(c);
  };
  visit(root);
  return out;
}

/** All the text a document holds, attribute values included: what a reader of the report sees. */
export function allText(e: XmlElement): string {
  return [...e.attributes.values(), ...e.children.map((c) => (typeof c === 'string' ? c : allText(c)))].join('\n');
}
